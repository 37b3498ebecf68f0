// Package soak runs instances of a generated repository against a real
// redis-server while it injects faults, records every read and write, and
// checks the record with internal/testing/history: the test of the product's two
// promises that attacks them the way production does. Its test runs it
// briefly in `make test`; cmd/soak runs it for as long as asked
// (`make soak SOAK=10m`) and prints a table per mode and fault.
package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest/proxy"
	"github.com/hotkeygen/hotkeygen/internal/testing/soak/model"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// Config is one run.
type Config struct {
	// Mode is the repositories' invalidation mode. With pubsub only the
	// repositories write (other writers are not seen, by design); with
	// off the bound is the refresh interval plus Bound.
	Mode       string
	Duration   time.Duration
	Instances  int  // at least 3
	Keys       int  // hot keys, read by every instance
	Saturating bool // readers in tight loops on every core instead of paced
	Bound      time.Duration
	Faults     []Fault
	// Sentinel runs against a master, a replica and a Sentinel, every
	// client a failover client, instead of one redis-server: for
	// SentinelFaults.
	Sentinel bool
	// Hash runs the checker over collections in a Redis hash
	// (runtime.Collection, layout=hash) instead of users.
	Hash bool
	// Cluster runs against a local cluster of three masters, with a
	// replica each when a fault needs one, every client a cluster client:
	// for ClusterFaults.
	Cluster bool
	// Replica runs against a master and a replica of it, which every
	// client but the admin's reaches at an endpoint (a proxy of its own)
	// that follows the master: for ReplicaFaults.
	Replica bool
	// Database backs the records with a database (see database): every
	// writer updates it, then deletes or sets the key, a quarter as often
	// as without, and the repositories' loaders read it, slowly. Not with
	// Hash.
	Database bool
}

// Refresh is the refresh interval of invalidate=off runs, which bounds
// their staleness.
const Refresh = 200 * time.Millisecond

// RefreshFailures is how many refreshes in a row may fail before an
// invalidate=off run drops a copy: 2 s at Refresh.
const RefreshFailures = 10

// Phase is one fault's part of a run and the verdict on it: the fault
// began at From and was over at Done, and WritesAfter writes begun after
// Done and before the next fault were acknowledged (a fault after which
// none is left the service broken).
type Phase struct {
	Fault       Fault
	Err         error // the fault's, when it could not be injected as planned
	From, Done  time.Duration
	WritesAfter int
	Report      history.Report
	// Trail is what happened around the first read stale beyond the
	// bound, if any (see trail).
	Trail string
	// HotRate is how many hot reads a second the busy readers began in
	// the second before the fault and in its outages: a hot key served
	// from memory, but slowly, is not kept available.
	HotRate struct{ Before, During float64 }
}

// Result is the verdict on a run.
type Result struct {
	Config Config
	Total  history.Report
	Phases []Phase
	// Openings are when an instance's breaker opened (the runtime's
	// "Redis unreachable" warning), in the run's time.
	Openings []time.Duration
	// Hangs are when Redis left the checker's probe unanswered for
	// hungFor or more outside every fault (see probe).
	Hangs []history.Window
	// Trail is what happened around the first read stale beyond the
	// bound, if any (see trail).
	Trail string
}

// openedFor is how long after a fault is over a breaker that opens is
// still the fault's: a restarted server's first seconds, a cluster's
// failover.
const openedFor = 2 * time.Second

// FalseOpenings counts the breakers that opened outside every fault (from
// its start until openedFor after it was over) and every hang: on a
// machine loaded but with Redis healthy, each is hot keys served as
// stale reads and cold reads failing for nothing.
func (res *Result) FalseOpenings() int {
	n := 0
	for _, at := range res.Openings {
		fault := slices.ContainsFunc(res.Phases, func(p Phase) bool { return at >= p.From && at <= p.Done+openedFor })
		hang := slices.ContainsFunc(res.Hangs, func(w history.Window) bool { return at >= w.From && at <= w.To+2*probeEvery })
		if !fault && !hang {
			n++
		}
	}
	return n
}

// minPhase is the shortest a phase may last past its fault: long enough
// for a few hundred writes and many thousand reads after it.
const minPhase = time.Second

// MinDuration is the shortest run of faults: each fault's own time and a
// phase of minPhase past it, and as long before the first.
func MinDuration(faults []Fault) time.Duration {
	d := minPhase * time.Duration(len(faults)+1)
	for _, f := range faults {
		d += f.lasts
	}
	return d
}

// every is how long each phase of a run of cfg lasts past its fault, and
// the run before its first: what the faults leave of the run's duration,
// shared equally.
func every(cfg Config) time.Duration {
	left := cfg.Duration
	for _, f := range cfg.Faults {
		left -= f.lasts
	}
	return left / time.Duration(len(cfg.Faults)+1)
}

// Run runs cfg against a redis-server of its own.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Instances < 3 || cfg.Keys < 1 {
		return nil, errors.New("soak: at least 3 instances and 1 key")
	}
	if every(cfg) < minPhase/2 {
		return nil, fmt.Errorf("soak: %v leaves too little of a phase to each fault: give it at least %v", cfg.Duration, MinDuration(cfg.Faults))
	}
	if cfg.Bound == 0 {
		cfg.Bound = 50 * time.Millisecond
	}
	proxied := cfg.Replica
	for _, f := range cfg.Faults {
		proxied = proxied || f.proxied
	}
	if proxied && (cfg.Cluster || cfg.Sentinel) {
		return nil, errors.New("soak: proxies stand in front of one server or a master and its replica, not a Sentinel's or a cluster's")
	}
	r := &run{cfg: cfg, start: time.Now()}
	if cfg.Cluster {
		replicas := 0
		for _, f := range cfg.Faults {
			if f.replica {
				replicas = 1
			}
		}
		cl, err := redistest.LaunchCluster(3, replicas)
		if err != nil {
			return nil, err
		}
		defer cl.Stop()
		r.cl = cl
		r.client = func(opt redis.Options) redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Seeds(), MaxRetries: opt.MaxRetries})
		}
		return r.run(ctx)
	}
	if cfg.Sentinel {
		sn, err := redistest.LaunchSentinel()
		if err != nil {
			return nil, err
		}
		defer sn.Stop()
		r.sn = sn
		r.client = func(opt redis.Options) redis.UniversalClient {
			return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: sn.MasterName, SentinelAddrs: sn.SentinelAddrs, MaxRetries: opt.MaxRetries})
		}
		return r.run(ctx)
	}
	var err error
	if cfg.Replica {
		r.srv, r.replica, err = redistest.LaunchPair("--enable-debug-command", "yes")
	} else {
		r.srv, err = redistest.Launch("--enable-debug-command", "yes")
	}
	if err != nil {
		return nil, err
	}
	defer r.srv.Stop()
	if r.replica != nil {
		defer r.replica.Stop()
	}
	r.client = func(opt redis.Options) redis.UniversalClient {
		opt.Addr = r.srv.Addr // the master's, which a failover changes
		return redis.NewClient(&opt)
	}
	if proxied {
		for range cfg.Instances + 1 {
			p, err := proxy.New(r.srv.Addr)
			if err != nil {
				return nil, err
			}
			defer p.Close()
			r.proxies = append(r.proxies, p)
		}
	}
	return r.run(ctx)
}

type run struct {
	cfg     Config
	srv     *redistest.Server   // the server, or the master of cfg.Replica
	replica *redistest.Server   // its replica, if cfg.Replica
	sn      *redistest.Sentinel // the servers, if cfg.Sentinel
	cl      *redistest.Cluster  // the nodes, if cfg.Cluster
	start   time.Time
	admin   redis.UniversalClient
	// client connects to the run's Redis: to the server, through the
	// Sentinel to whichever server is master, or to the cluster.
	client func(redis.Options) redis.UniversalClient
	// proxies, when a fault needs them (Fault.proxied) or cfg.Replica, are
	// how each instance, then the plain writer, reaches the server: one
	// each, so that one instance can be cut off alone; the admin client
	// connects directly.
	proxies []*proxy.Proxy
	opts    []runtime.Option // the repositories'

	locks   []sync.Mutex // per key: writes of a key are serialised
	held    []bool       // per key, guarded by locks: a fault's, which the random writers leave alone
	version atomic.Int64
	seeder  writer

	// idle is until when the idle readers wait (the run's time, see
	// now): from idleBefore before a fault until idleInto after it began.
	idle atomic.Int64

	mu       sync.Mutex
	outages  []history.Window
	hangs    []history.Window // found by the probe, not injected
	resets   []history.Reset
	firsts   []history.Op    // the cold reads sent as each fault began
	openings []time.Duration // when a breaker opened
	events   []event         // what the runtimes logged, for trails
}

// How the idle readers meet each fault: they stop idleBefore it, and read
// again idleInto after it began, finding every connection as the fault
// left it (a server shut down, a network cut) with no read of theirs on
// the way.
const (
	idleBefore = 300 * time.Millisecond
	idleInto   = 100 * time.Millisecond
)

// sharedClient is the instance whose application sends commands of its
// own on the client it gave its repository (appTraffic); the table
// reports its recovery beside the others'.
const sharedClient = 0

func (r *run) now() time.Duration { return time.Since(r.start) }

// hotQPS is the runtime's hot_qps in every run: the paced readers read
// each hot key thousands of times a second on each instance, far above
// it, on a machine that can drive them.
const hotQPS = 100

func (r *run) run(ctx context.Context) (*Result, error) {
	r.admin = r.client(redis.Options{MaxRetries: -1})
	defer func() { r.admin.Close() }() // a failover replaces it
	r.locks = make([]sync.Mutex, r.cfg.Keys+1)
	r.held = make([]bool, r.cfg.Keys+1)
	plain := r.connect(r.cfg.Instances)
	defer plain.Close()

	r.opts = []runtime.Option{runtime.WithInvalidate(r.cfg.Mode), runtime.WithHotQPS(hotQPS), runtime.WithWarmQPS(10),
		runtime.WithTopN(r.cfg.Keys), runtime.WithLogger(slog.New(logged{r, -1}))}
	if r.cfg.Mode == runtime.InvalidateOff {
		// Refresh bounds staleness here, five times a second; a copy is
		// dropped after RefreshFailures failed refreshes in a row, so the
		// outage a run judges (about a second) is within their budget.
		r.opts = append(r.opts, runtime.WithRefresh(Refresh), runtime.WithRefreshFailures(RefreshFailures))
	}
	var db *database
	if r.cfg.Database {
		// A hot key deleted after its update holds no copy until a read
		// loads it again: in an outage, only the database can answer it,
		// as a service with a database has it do (degrade=loader).
		db = newDatabase()
		r.opts = append(r.opts, model.WithRecordLoader(db.load), runtime.WithDegrade(runtime.DegradeLoader))
	}
	var repos []store
	var clients []redis.UniversalClient
	for i := range r.cfg.Instances {
		rdb := r.connect(i)
		defer rdb.Close()
		repo := r.newStore(rdb, runtime.WithLogger(slog.New(logged{r, i})))
		defer repo.Close()
		repos = append(repos, repo)
		clients = append(clients, rdb)
	}
	// Other programs' writes are not seen with pubsub, by design: there
	// the seeds go through a repository too.
	plainWriter := writer{inst: -1, set: plainSetter(plain, r.cfg.Hash, 0)}
	repoWriter := func(i int) writer { return writer{inst: i, set: repos[i].set} }
	if db != nil {
		plainWriter = writer{inst: -1, set: db.deleter(plain)}
		repoWriter = func(i int) writer { return writer{inst: i, set: db.writer(repos[i])} }
	}
	r.seeder = plainWriter
	if announcedOnly(r.cfg.Mode) {
		r.seeder = repoWriter(0)
	}
	seedLog := &history.Log{}
	if err := r.seed(ctx, seedLog); err != nil {
		return nil, err
	}

	// The run ends when its last phase has had its share of the
	// duration, however long the faults before it took: a restart slowed
	// by a loaded machine must not leave the phase after it no time.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ends := time.Now().Add(r.cfg.Duration)
	var wg sync.WaitGroup
	var logs []*history.Log
	spawn := func(f func(context.Context, *history.Log)) {
		l := &history.Log{}
		logs = append(logs, l)
		wg.Add(1)
		go func() { defer wg.Done(); f(runCtx, l) }()
	}
	for i, repo := range repos {
		read := func(k reads) { spawn(func(ctx context.Context, l *history.Log) { r.read(ctx, i, repo, l, k) }) }
		if r.cfg.Saturating {
			for range 2 * max(1, goMaxProcs()) {
				read(mixedReads)
			}
			continue
		}
		read(hotReads)
		read(hotReads)
		read(coldReads)
		read(idleReads)
	}
	for i := range repos[:2] {
		spawn(func(ctx context.Context, l *history.Log) { r.write(ctx, l, repoWriter(i)) })
	}
	if !announcedOnly(r.cfg.Mode) {
		spawn(func(ctx context.Context, l *history.Log) { r.write(ctx, l, plainWriter) })
	}
	spawn(func(ctx context.Context, _ *history.Log) { appTraffic(ctx, clients[sharedClient]) })
	if r.srv != nil && !r.cfg.Replica {
		// One server, whose address stays: a cluster's or a failover's
		// hangs are not told apart from their faults.
		spawn(func(ctx context.Context, _ *history.Log) { r.probe(ctx, r.srv.Addr) })
	}
	phases := make([]Phase, len(r.cfg.Faults))
	spawn(func(ctx context.Context, l *history.Log) {
		every := every(r.cfg)
		for i, f := range r.cfg.Faults {
			if !sleep(ctx, every-idleBefore) {
				return
			}
			r.idle.Store(int64(r.now() + idleBefore + idleInto))
			if !sleep(ctx, idleBefore) {
				return
			}
			phases[i] = Phase{Fault: f, From: r.now()}
			r.sendFirst(ctx, repos)
			if err := f.inject(ctx, r, l); err != nil && ctx.Err() == nil {
				slog.Warn("soak: fault failed", "fault", f.Name, "err", err)
				phases[i].Err = err
			}
			phases[i].Done = r.now()
		}
		sleep(ctx, max(every, time.Until(ends)))
		cancel()
	})
	wg.Wait()

	ops := history.Merge(append(logs, seedLog, &history.Log{Ops: r.firsts})...)
	// The hangs of the faults' own (a freeze, a sleep) are theirs.
	hangs := slices.DeleteFunc(slices.Clone(r.hangs), func(h history.Window) bool {
		return slices.ContainsFunc(r.outages, func(w history.Window) bool { return h.From <= w.To && w.From <= h.To })
	})
	base := history.Run{Bound: r.cfg.Bound, Outages: append(slices.Clone(r.outages), hangs...), Resets: r.resets}
	base.Heated = history.HeatedBefore(ops, base.Outages, hotQPS)
	if r.cfg.Mode == runtime.InvalidateOff {
		// Only a refresh vouches for a copy, and none completes while
		// Redis sleeps or is paused.
		base.Bound += Refresh + stallFor
	}
	r.mu.Lock()
	res := &Result{Config: r.cfg, Total: history.Check(ops, base), Openings: slices.Clone(r.openings), Hangs: hangs}
	events := slices.Clone(r.events)
	r.mu.Unlock()
	if bb := res.Total.BeyondBound; len(bb) > 0 {
		res.Trail = trail(ops, bb[0], base, events)
	}
	for i, p := range phases {
		to := r.now()
		if i+1 < len(phases) && phases[i+1].From > 0 {
			to = phases[i+1].From
		}
		phase := base
		phase.Outages = nil
		for _, w := range base.Outages {
			if w.From >= p.From && w.From < to {
				phase.Outages = append(phase.Outages, w)
			}
		}
		p.Report = history.Check(window(ops, p.From, to), phase)
		if bb := p.Report.BeyondBound; len(bb) > 0 {
			p.Trail = trail(ops, bb[0], phase, events)
		}
		p.HotRate.Before, p.HotRate.During = hotRates(ops, p.From, phase.Outages)
		p.Report.Writes = 0
		for _, op := range ops {
			if op.Kind == history.Write && op.Start >= p.From && op.Start < to {
				p.Report.Writes++
				if !op.Failed && op.Start >= p.Done {
					p.WritesAfter++
				}
			}
		}
		res.Phases = append(res.Phases, p)
	}
	return res, nil
}

// hotRates returns how many hot reads a second the busy readers of ops
// began in outages, and in the second before from of the keys and
// instances the outages cover (a cut-off instance's alone); 0, 0 without
// an outage.
func hotRates(ops []history.Op, from time.Duration, outages []history.Window) (before, during float64) {
	outages = slices.DeleteFunc(slices.Clone(outages), func(w history.Window) bool { return w.Hung }) // not faults'
	var n, in int
	var span time.Duration
	for _, w := range outages {
		span += w.To - w.From
	}
	if span == 0 {
		return 0, 0
	}
	for _, op := range ops {
		if op.Kind != history.Read || !op.Hot || op.Reader != history.Busy {
			continue
		}
		for _, w := range outages {
			if (w.Keys != nil && !w.Keys(op.Key)) || (w.Partition && op.Instance != w.Instance) {
				continue
			}
			if op.Start >= from-time.Second && op.Start < from {
				n++
			} else if op.Start >= w.From && op.Start < w.To {
				in++
			}
			break
		}
	}
	return float64(n), float64(in) / span.Seconds()
}

// sendFirst sends a cold read on every instance, recorded as the reads on
// their way as a fault begins (history.First), and returns once each is
// sent: a read a fault catches half done must end by its caller's
// deadline, or by the breaker's opening, not the client's timeout.
func (r *run) sendFirst(ctx context.Context, repos []store) {
	var sent sync.WaitGroup
	for i, repo := range repos {
		sent.Add(1)
		go func() {
			id := coldBase + rand.Int64N(1_000_000)
			start := r.now()
			sent.Done()
			_, err := repo.get(ctx, id)
			op := history.Op{Kind: history.Read, Reader: history.First, Instance: i, Key: id, Start: start, End: r.now(),
				Failed: err != nil && !errors.Is(err, runtime.ErrNotFound)}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.firsts = append(r.firsts, op)
		}()
	}
	sent.Wait()
}

// window returns every write of ops and the reads that began in
// [from, to).
func window(ops []history.Op, from, to time.Duration) []history.Op {
	var out []history.Op
	for _, op := range ops {
		if op.Kind == history.Write || op.Start >= from && op.Start < to {
			out = append(out, op)
		}
	}
	return out
}

// coldBase is where the ids of cold reads start: keys nobody writes.
const coldBase = 1_000_000

// reads says what a reader reads.
//
// Paced, hot and cold reads go apart, as a server's requests do, so that
// a cold read waiting on Redis holds up no hot read: an outage shows in
// how long hot reads take. Saturating readers mix one cold read in ten
// into their loops instead: a loop of hot reads alone, answered from
// memory, recorded 2.6 million reads a second on two cores (11 GB of
// history in 11 s); with the round trips of the cold reads, a run
// records about a tenth of that.
type reads int

const (
	hotReads   reads = iota // hot keys, a read every 100 µs
	coldReads               // cold keys (nobody writes them), a read every 500 µs
	mixedReads              // one cold key in ten, the others hot, in a tight loop
	idleReads               // hot keys as hotReads, idle around each fault (run.idle)
)

// read reads keys of kind k one after the other.
func (r *run) read(ctx context.Context, inst int, repo store, l *history.Log, k reads) {
	pace := map[reads]time.Duration{hotReads: 100 * time.Microsecond, coldReads: 500 * time.Microsecond, idleReads: 100 * time.Microsecond}[k]
	reader := history.Busy
	if k == idleReads {
		reader = history.Idle
	}
	next := time.Now()
	for ctx.Err() == nil {
		if until := time.Duration(r.idle.Load()); k == idleReads && r.now() < until {
			if !sleep(ctx, until-r.now()) {
				return
			}
			next = time.Now()
		}
		id := int64(1 + rand.IntN(r.cfg.Keys))
		hot := k == hotReads || k == idleReads || k == mixedReads && rand.IntN(10) != 0
		if !hot {
			id = coldBase + rand.Int64N(1_000_000)
		}
		start := r.now()
		version, err := repo.get(ctx, id)
		op := history.Op{Kind: history.Read, Reader: reader, Instance: inst, Key: id, Start: start, End: r.now(), Hot: hot, Failed: err != nil}
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			op.Failed = false // version 0: absent
		case err == nil:
			op.Version = version
		case ctx.Err() != nil:
			return
		}
		l.Add(op)
		if pace > 0 {
			next = next.Add(pace)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			} else if d < -time.Second {
				next = time.Now() // fell far behind: do not burst
			}
		}
	}
}

// connect returns a client for instance i, or for the plain writer (i ==
// cfg.Instances): through its own proxy when the run has proxies.
func (r *run) connect(i int) redis.UniversalClient {
	if r.proxies != nil {
		return redis.NewClient(&redis.Options{Addr: r.proxies[i].Addr})
	}
	return r.client(redis.Options{})
}

// newStore returns an instance's repository over rdb, with the run's
// options and opts.
func (r *run) newStore(rdb redis.UniversalClient, opts ...runtime.Option) store {
	opts = append(slices.Clip(r.opts), opts...)
	if r.cfg.Hash {
		return newCollections(rdb, opts...)
	}
	return records{model.MustNewRecordRepo(rdb, opts...)}
}

// appTraffic is what an application sends on the client it gave its
// repository: a SET of a key of its own every 100 ms, as a binlog reader
// marking changes would. Whether the client's pool, failing these through
// an outage, serves the repository as soon as Redis is back is what the
// table's recovery of sharedClient tells apart from the other instances'.
func appTraffic(ctx context.Context, rdb redis.UniversalClient) {
	for n := 0; sleep(ctx, 100*time.Millisecond); n++ {
		rdb.Set(ctx, "soak:app", n, 0)
	}
}

// record records window w of the run, for the checker.
func (r *run) record(w history.Window) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outages = append(r.outages, w)
}

// reset records that Redis lost the keys keys selects (nil: every key) at
// at, for the checker.
func (r *run) reset(at time.Duration, keys func(int64) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resets = append(r.resets, history.Reset{At: at, Keys: keys})
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// announcedOnly reports whether mode hears only the repositories' own
// writes (Pub/Sub of either kind): another program's write is not seen.
func announcedOnly(mode string) bool {
	return mode == runtime.InvalidatePubSub || mode == runtime.InvalidatePubSubKeys
}
