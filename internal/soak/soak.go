// Package soak runs instances of a generated repository against a real
// redis-server while it injects faults, records every read and write, and
// checks the record with internal/history: the test of the product's two
// promises that attacks them the way production does. Its test runs it
// briefly in `make test`; cmd/soak runs it for as long as asked
// (`make soak SOAK=10m`) and prints a table per mode and fault.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/history"
	"github.com/hotkeygen/hotkeygen/internal/redistest"
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
}

// Refresh is the refresh interval of invalidate=off runs, which bounds
// their staleness.
const Refresh = 200 * time.Millisecond

// Phase is one fault's part of a run and the verdict on it: the fault
// began at From and was over at Done, and WritesAfter writes begun after
// Done and before the next fault were acknowledged (a fault after which
// none is left the service broken).
type Phase struct {
	Fault       Fault
	From, Done  time.Duration
	WritesAfter int
	Report      history.Report
}

// Result is the verdict on a run.
type Result struct {
	Config Config
	Total  history.Report
	Phases []Phase
}

// Run runs cfg against a redis-server of its own.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Instances < 3 || cfg.Keys < 1 {
		return nil, errors.New("soak: at least 3 instances and 1 key")
	}
	if cfg.Bound == 0 {
		cfg.Bound = 50 * time.Millisecond
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
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs, MaxRetries: opt.MaxRetries})
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
	srv, err := redistest.Launch("--enable-debug-command", "yes")
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	r.srv = srv
	r.client = func(opt redis.Options) redis.UniversalClient {
		opt.Addr = srv.Addr
		return redis.NewClient(&opt)
	}
	return r.run(ctx)
}

type run struct {
	cfg   Config
	srv   *redistest.Server   // the server, unless cfg.Sentinel
	sn    *redistest.Sentinel // the servers, if cfg.Sentinel
	cl    *redistest.Cluster  // the nodes, if cfg.Cluster
	start time.Time
	admin redis.UniversalClient
	// client connects to the run's Redis: to the server, through the
	// Sentinel to whichever server is master, or to the cluster.
	client func(redis.Options) redis.UniversalClient

	locks   []sync.Mutex // per key: writes of a key are serialised
	version atomic.Int64
	seedSet func(ctx context.Context, id, version int64) error

	mu      sync.Mutex
	outages []history.Window
	resets  []history.Reset
}

// sharedClient is the instance the table reports the recovery of apart
// from the others'.
const sharedClient = 0

func (r *run) now() time.Duration { return time.Since(r.start) }

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

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func (r *run) run(ctx context.Context) (*Result, error) {
	r.admin = r.client(redis.Options{MaxRetries: -1})
	defer r.admin.Close()
	r.locks = make([]sync.Mutex, r.cfg.Keys+1)
	plain := r.client(redis.Options{})
	defer plain.Close()

	opts := []runtime.Option{runtime.WithInvalidate(r.cfg.Mode), runtime.WithHotQPS(100), runtime.WithWarmQPS(10),
		runtime.WithTopN(r.cfg.Keys), runtime.WithLogger(quiet)}
	if r.cfg.Mode == runtime.InvalidateOff {
		opts = append(opts, runtime.WithRefresh(Refresh))
	}
	var repos []store
	for range r.cfg.Instances {
		rdb := r.client(redis.Options{})
		defer rdb.Close()
		var repo store = users{userstore.NewUserRepo(rdb, opts...)}
		if r.cfg.Hash {
			repo = newCollections(rdb, opts...)
		}
		defer repo.Close()
		repos = append(repos, repo)
	}
	// Other programs' writes are not seen with pubsub, by design: there
	// the seeds go through a repository too.
	plainWrite := plainSetter(plain, r.cfg.Hash)
	r.seedSet = plainWrite
	if r.cfg.Mode == runtime.InvalidatePubSub {
		r.seedSet = repos[0].set
	}
	seedLog := &history.Log{}
	if err := r.seed(ctx, seedLog); err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithTimeout(ctx, r.cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	var logs []*history.Log
	spawn := func(f func(context.Context, *history.Log)) {
		l := &history.Log{}
		logs = append(logs, l)
		wg.Add(1)
		go func() { defer wg.Done(); f(runCtx, l) }()
	}
	readers := 2
	if r.cfg.Saturating {
		readers = 2 * max(1, goMaxProcs())
	}
	for i, repo := range repos {
		for range readers {
			spawn(func(ctx context.Context, l *history.Log) { r.read(ctx, i, repo, l) })
		}
	}
	for i, repo := range repos[:2] {
		spawn(func(ctx context.Context, l *history.Log) { r.write(ctx, l, i, repo.set) })
	}
	if r.cfg.Mode != runtime.InvalidatePubSub {
		spawn(func(ctx context.Context, l *history.Log) { r.write(ctx, l, -1, plainWrite) })
	}
	phases := make([]Phase, len(r.cfg.Faults))
	spawn(func(ctx context.Context, l *history.Log) {
		every := r.cfg.Duration / time.Duration(len(r.cfg.Faults)+1)
		for i, f := range r.cfg.Faults {
			if !sleep(ctx, every) {
				return
			}
			phases[i] = Phase{Fault: f, From: r.now()}
			if err := f.inject(ctx, r, l); err != nil && ctx.Err() == nil {
				slog.Warn("soak: fault failed", "fault", f.Name, "err", err)
			}
			phases[i].Done = r.now()
		}
	})
	wg.Wait()

	ops := history.Merge(append(logs, seedLog)...)
	base := history.Run{Bound: r.cfg.Bound, Outages: r.outages, Resets: r.resets}
	if r.cfg.Mode == runtime.InvalidateOff {
		// Only a refresh vouches for a copy, and none completes while
		// Redis sleeps or is paused.
		base.Bound += Refresh + stallFor
	}
	res := &Result{Config: r.cfg, Total: history.Check(ops, base)}
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

// seed writes every hot key, recording the writes: at the start, and
// after Redis lost its data.
func (r *run) seed(ctx context.Context, l *history.Log) error {
	deadline := time.Now().Add(2 * time.Second) // a repository may still fail fast for a moment
	for id := 1; id <= r.cfg.Keys; id++ {
		for {
			err := r.writeOne(ctx, l, -1, int64(id), r.seedSet)
			if err == nil {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("soak: seed: %w", err)
			}
			sleep(ctx, 10*time.Millisecond)
		}
	}
	return nil
}

// coldBase is where the ids of cold reads start: keys nobody writes.
const coldBase = 1_000_000

// read reads, one time in ten a cold key, paced at a read every 100 µs
// unless the run saturates.
func (r *run) read(ctx context.Context, inst int, repo store, l *history.Log) {
	const pace = 100 * time.Microsecond
	next := time.Now()
	for ctx.Err() == nil {
		id := int64(1 + rand.IntN(r.cfg.Keys))
		hot := rand.IntN(10) != 0
		if !hot {
			id = coldBase + rand.Int64N(1_000_000)
		}
		start := r.now()
		version, err := repo.get(ctx, id)
		op := history.Op{Kind: history.Read, Instance: inst, Key: id, Start: start, End: r.now(), Hot: hot, Failed: err != nil}
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			op.Failed = false // version 0: absent
		case err == nil:
			op.Version = version
		case ctx.Err() != nil:
			return
		}
		l.Add(op)
		if !r.cfg.Saturating {
			next = next.Add(pace)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			} else if d < -time.Second {
				next = time.Now() // fell far behind: do not burst
			}
		}
	}
}

// write writes a random hot key every 5 ms through set, instance inst's
// repository or a plain client (-1).
func (r *run) write(ctx context.Context, l *history.Log, inst int, set func(ctx context.Context, id, version int64) error) {
	for sleep(ctx, 5*time.Millisecond) {
		r.writeOne(ctx, l, inst, int64(1+rand.IntN(r.cfg.Keys)), set)
	}
}

func (r *run) writeOne(ctx context.Context, l *history.Log, inst int, id int64, set func(ctx context.Context, id, version int64) error) error {
	r.locks[id].Lock()
	defer r.locks[id].Unlock()
	v := r.version.Add(1)
	start := r.now()
	err := set(ctx, id, v)
	if ctx.Err() != nil && err != nil {
		return err
	}
	l.Add(history.Op{Kind: history.Write, Instance: inst, Key: id, Version: v, Start: start, End: r.now(), Failed: err != nil})
	return err
}

// plainSet writes u as another program would: the generated codec's bytes
// with a plain SET.
func plainSet(ctx context.Context, rdb redis.Cmdable, u *userstore.User) error {
	b, err := u.AppendMsgpack(nil)
	if err != nil {
		return err
	}
	return rdb.Set(ctx, userstore.UserKey(u.ID), b, 0).Err()
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
