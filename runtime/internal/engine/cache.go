package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/changes"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
	"github.com/hotkeygen/hotkeygen/runtime/internal/rates"
	"github.com/hotkeygen/hotkeygen/runtime/internal/reads"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"

	"github.com/Yiling-J/theine-go"
	"github.com/redis/go-redis/v9"
)

// Glue is what generated code supplies for one entity: how a key becomes
// its Redis key, and how to deep-copy a value.
type Glue[K comparable, V any] struct {
	// Key returns the Redis key of k. It is called on every read that is
	// not a local hit, and must be a pure function of k.
	Key func(K) string
	// Clone returns a deep copy: a hot value is shared, and every caller
	// gets its own copy so none can change what the next one reads.
	Clone func(*V) *V
	// Prefix is what every Redis key of the entity starts with ("user:"):
	// invalidations are tracked for it.
	Prefix string
	// Version is the version of the entity's values (the annotation's
	// version=; 0 counts as 1). Key and Prefix already place a version of
	// 2 or more apart from the others; the Bloom filter follows them, and
	// Stats reports it, so decode errors name the version they hit.
	Version int
	// Encode appends v to b as msgpack, and Decode sets v from msgpack:
	// the generated AppendMsgpack and ReadMsgpack, which skip msgpack's
	// reflection. Either may be nil, for reflection.
	Encode func(v *V, b []byte) ([]byte, error)
	Decode func(v *V, b []byte) error
	// Defaults are the options annotated on the entity, applied before
	// New's opts, which have the last word: an error about an option
	// then names the caller's own by its place among opts.
	Defaults []config.Option

	// hash, set by NewCollection, stores each value as a Redis hash
	// (layout.Hash) whose items keep their expiry under hashExpires in
	// their msgpack; false stores it as a String.
	hash        bool
	hashExpires string
}

// Cache reads and writes values of type V, identified by keys of type K, in
// Redis, and serves hot keys from a local store. K is the entity's key
// field, or a struct of its key fields: local hits are looked up by K
// itself, so a hit never builds a string. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	cfg    config.Config
	rdb    redis.UniversalClient
	key    func(K) string
	clone  func(*V) *V
	prefix string
	// version is Glue.Version, at least 1.
	version int
	codec   *codec[V]
	log     *slog.Logger
	// layout is how values sit in Redis: a String per key, or a hash for
	// a collection (runtime/internal/layout).
	layout layout.Layout
	// reader sends the reads of bytes to Redis, through the breakers of
	// their nodes (runtime/internal/reads); the writes take write.go's
	// path.
	reader reads.Reader
	// sender sends the reads of one key: on the client's automatic
	// pipeline, or through its pool (runtime/internal/send).
	sender send.Sender

	// loads reads keys from Redis, and from the loaders when Redis
	// misses, once for concurrent callers (load.go).
	loads loads[K, V]

	det *fresh.Detector[K]
	// hub is the transport of the Cache's client, shared by every
	// repository on it (runtime/internal/track); copies are the local
	// copies of hot keys and the freshness protocol (internal/fresh).
	hub    *track.Hub
	copies fresh.Copies[K, V]
	agg    *aggregator[K, V] // nil unless cfg.Aggregate
	// chg is the change buffer (internal/changes), bloom the filter in
	// front of the loader (internal/bloom); nil unless turned on.
	chg   *changes.Buffer
	bloom *bloom.Filter

	count counters
	sizes sizes
	// obs records the reads that leave the process, their loads, and a
	// sample of the local ones; nil without an Observer (observe.go).
	obs Recorder
	// writes takes every write down one path (write.go).
	writes writer[K, V]

	hist *rates.History

	// ticker runs the background work (background.go), refresh reloads
	// the hot copies (refresh.go), and worker syncs the change buffer
	// (internal/changes), started when there is a loader (setupChanges).
	ticker  ticker[K, V]
	refresh refresher[K, V]
	worker  changes.Worker[K, V]

	ctx    context.Context // cancelled by Close; bounds background I/O
	cancel context.CancelFunc
	done   chan struct{}
	// g runs every goroutine the Cache starts, and Close waits for them.
	g         group.Group
	closed    atomic.Bool
	closeOnce sync.Once
}

// New returns a Cache over rdb, configured by cfg, which config.Apply
// made.
func New[K comparable, V any](rdb redis.UniversalClient, glue Glue[K, V], cfg config.Config) (*Cache[K, V], error) {
	loader, batchLoader, err := loaders[K, V](cfg)
	if err != nil {
		return nil, err
	}
	observer, ok := cfg.Given.Observer.(Observer)
	if cfg.Given.Observer != nil && !ok {
		return nil, fmt.Errorf("hotkey: the observer is a %T, not an engine.Observer; pass runtime/otel's Instrument()", cfg.Given.Observer)
	}
	if cfg.Degrade == config.DegradeLoader && loader == nil {
		return nil, &config.Error{Option: "degrade", Msg: "degrade=loader needs a loader; pass the repository's With…Loader or With…BatchLoader option"}
	}
	if cfg.Aggregate && cfg.Entity == "" {
		return nil, &config.Error{Option: "aggregate", Msg: "cluster-wide detection names its Redis sets after the entity; pass WithEntity"}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	base := cfg.Logger // the hub's, shared by the entities on the client
	if cfg.Entity != "" {
		cfg.Logger = cfg.Logger.With("entity", cfg.Entity)
	}
	sender, err := send.For(rdb, way(cfg))
	if err != nil {
		return nil, fmt.Errorf("hotkey: the client's automatic pipeline: %w; use WithAutoPipeline(false)", err)
	}
	local, err := theine.NewBuilder[K, *fresh.Copy[V]](int64(cfg.LocalSize)).Build()
	if err != nil {
		return nil, fmt.Errorf("hotkey: local store: %w", err)
	}
	c := &Cache[K, V]{
		cfg:     cfg,
		rdb:     rdb,
		sender:  sender,
		key:     glue.Key,
		clone:   glue.Clone,
		prefix:  glue.Prefix,
		version: max(glue.Version, 1),
		codec:   newCodec(glue.Encode, glue.Decode),
		log:     cfg.Logger,
		hist:    rates.New(HistoryLen),
		done:    make(chan struct{}),
	}
	// learnsTTL is set when the entity's keys carry a TTL: a ttl, or a
	// loader that writes placeholders for null_ttl. Its reads then ask for
	// the key's remaining TTL in the same round trip, so that no local
	// copy outlives the key (copyMeta.live); the others pay nothing.
	learnsTTL := cfg.TTL > 0 || cfg.NullTTL > 0 && loader != nil
	c.layout = layout.NewString(cfg.Clock, learnsTTL)
	if glue.hash {
		c.layout = layout.NewHash(cfg.Clock, learnsTTL, glue.hashExpires, cfg.TTL == 0, rdb)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if cfg.Bloom {
		c.bloom = bloom.New(rdb, bloomName(cfg.Entity, c.version), cfg.BloomItems, cfg.BloomFP)
	}
	c.loads = loads[K, V]{bloom: c.bloom, rdb: rdb, layout: c.layout, sender: sender, reader: &c.reader, copies: &c.copies, writes: &c.writes,
		key: glue.Key, clone: glue.Clone, decode: func(key string, b []byte) (*V, error) { return decodeValue(c, key, b) },
		count: &c.count, g: &c.g, done: c.ctx, closed: &c.closed, log: cfg.Logger, nullTTL: cfg.NullTTL, leaseTTL: cfg.RebuildLockTTL,
		flights: map[K]*loadCall[V]{}, landed: newLandings(), one: loader, batch: batchLoader, leases: cfg.RebuildLock}
	c.sizes = sizes{warn: cfg.MaxValueBytes, hard: cfg.MaxValueBytesHard, now: cfg.Clock.Now, log: cfg.Logger, count: &c.count.bigValues}
	c.det = fresh.NewDetector(Detection(cfg), glue.Key, c.copies.Demote)
	c.copies.Local, c.copies.Det, c.copies.Gens = local, c.det, &fresh.Generations{Seed: maphash.MakeSeed()}
	c.copies.Cfg = fresh.Params{LocalTTL: cfg.LocalTTL, NullTTL: cfg.NullTTL, RefreshFailures: cfg.RefreshFailures, StaleReads: cfg.StaleReads, OnInvalidate: cfg.Test.OnInvalidate}
	c.copies.Clock, c.copies.Clone, c.copies.Name, c.copies.Count = cfg.Clock, glue.Clone, glue.Key, &c.count.Counts
	c.copies.Reload = func(ctx context.Context, es []*fresh.Entry[K]) { c.refresh.reload(ctx, es, false) }
	c.copies.Done, c.ticker.c = c.ctx, c
	if cfg.Aggregate {
		c.agg = newAggregator(c)
	}
	if cfg.Degrade == config.DegradeLoader {
		c.loads.slots = make(chan struct{}, cfg.DegradeLimit)
	}
	topts := track.Options{
		Mode: cfg.Invalidate, Now: cfg.Clock.Now, Clock: config.ClockID(cfg.Clock), Log: base, Unavailable: ErrUnavailable,
		Line: cfg.Test.ProbeLine, Track: cfg.Test.TrackVia, TopologyEvery: cfg.Test.TopologyEvery, Linger: cfg.Test.Linger,
	}
	c.copies.Stamps = topts.Stamps()
	hub, err := track.Join(rdb, topts, glue.Prefix, &c.copies)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("hotkey: invalidation: %w; use WithInvalidate(%q)", err, config.InvalidatePubSub)
	}
	c.hub, c.copies.Nodes = hub, &hub.Nodes
	_, cluster := rdb.(*redis.ClusterClient)
	c.loads.lease = lease.Keys{TTL: cfg.RebuildLockTTL, Cluster: cluster, Hash: glue.hash}
	c.reader = reads.Reader{Client: rdb, Store: c.layout, Nodes: &hub.Nodes, Cluster: cluster, LearnsTTL: learnsTTL,
		Now: cfg.Clock.Now, Refuse: c.count.refuse, Count: c.count.redisError, Missing: noKey{}, Closed: ErrClosed}
	c.refresh = refresher[K, V]{det: c.det, copies: &c.copies, reader: &c.reader, g: &c.g,
		decode: func(key string, b []byte) (*V, error) { return decodeValue(c, key, b) },
		count:  &c.count.refreshes, done: c.ctx, now: cfg.Clock.Now, log: cfg.Logger}
	c.writes = writer[K, V]{bloom: c.bloom, rdb: rdb, layout: c.layout, copies: &c.copies, key: glue.Key, codec: c.codec, sizes: &c.sizes,
		count: &c.count, hub: hub, prefix: glue.Prefix, version: c.version,
		ttlOf: cfg.TTL, nullTTL: cfg.NullTTL, jitter: cfg.Jitter, now: cfg.Clock.Now, log: cfg.Logger,
		loader: loader != nil, leases: c.loads.leases, lease: c.loads.lease}
	if err := setupChanges(c); err != nil {
		c.Close()
		return nil, err
	}
	c.ticker.sched = newSchedule(cfg, cfg.Clock.Now())
	if observer != nil {
		c.obs = observer.Observe(Observed{Entity: cfg.Entity, Version: c.version, Commands: commands(c.layout.ReadOp()), Stats: c.Stats})
		c.loads.obs = c.obs
	}
	c.g.Go(c.ticker.run)
	return c, nil
}

// loaders checks that the loaders given as options fit the Cache's types,
// and returns them: the loader is the batch loader's when only that was
// given (oneAtATime).
func loaders[K comparable, V any](cfg config.Config) (func(context.Context, K) (*V, error), func(context.Context, []K) (map[K]*V, error), error) {
	var one func(context.Context, K) (*V, error)
	var many func(context.Context, []K) (map[K]*V, error)
	if cfg.Given.Loader != nil {
		var ok bool
		if one, ok = cfg.Given.Loader.(func(context.Context, K) (*V, error)); !ok {
			return nil, nil, fmt.Errorf("hotkey: the loader is a %T, but this cache needs a func(context.Context, %T) (*%T, error)", cfg.Given.Loader, *new(K), *new(V))
		}
	}
	if cfg.Given.BatchLoader != nil {
		var ok bool
		if many, ok = cfg.Given.BatchLoader.(func(context.Context, []K) (map[K]*V, error)); !ok {
			return nil, nil, fmt.Errorf("hotkey: the batch loader is a %T, but this cache needs a func(context.Context, []%T) (map[%[2]T]*%T, error)", cfg.Given.BatchLoader, *new(K), *new(V))
		}
	}
	if one == nil && many != nil {
		one = oneAtATime(many)
	}
	return one, many, nil
}

// oneAtATime is the loader of a cache given only a batch loader: it asks
// many for one key, so that Get and View load their misses, under the
// key's lease, as GetMany does.
func oneAtATime[K comparable, V any](many func(context.Context, []K) (map[K]*V, error)) func(context.Context, K) (*V, error) {
	return func(ctx context.Context, k K) (*V, error) {
		rows, err := many(ctx, []K{k})
		if err != nil {
			return nil, err
		}
		if v := rows[k]; v != nil {
			return v, nil
		}
		return nil, ErrNotFound
	}
}

// The read path, top to bottom. A cold read with a loader, of a key
// absent from Redis, goes down through these files in this order:
//
//	cache.go        Get: no local copy is held (hit asks no freshness check)
//	internal/fresh  Seen: the read is counted; the key is not hot
//	load.go         cold: the key's landed loads counted (flight.go's landings);
//	                fetch: the node's breaker lets the GET through (internal/reads),
//	                sent through the pool, or with other reads on the client's
//	                automatic pipeline (internal/send); it misses, and resolve starts
//	                one load for all concurrent callers, judged by the
//	                protocol's token (Begin); through: the Bloom filter may hold the id
//	                (internal/bloom); leased: the key's lease taken with SET NX GET
//	                (internal/lease), or waited for while another process holds it;
//	                call: the loader runs
//	write.go        backOne: the row encoded (encode.go's codec) within
//	                max_value_bytes_hard (bigvalue.go's sizes); commit: the lease's
//	                fill script, which writes the row only while the key holds the
//	                lease, the id added to the filter in the same round trip
//
// and returns up the same way; a hot key's load keeps its copy
// (Copies.Keep) before the flight ends. errors.go's vocabulary
// (opErr, and the classifier of "absent, or did Redis fail?") is called
// along the way, as errors are made.
//
// Every kind of read (Get, View, GetMany, HGet) decides alike after its
// local lookup, in two functions of this file: hit, whether the copy held
// answers (fresh, or stale while its node is down); then the read of its
// kind (one key through a flight, keys in batches, one field), which stops
// waiting when the node's breaker opens; then, if Redis failed, failed:
// the copy, a wait for a slow node, the loader (degrade=loader) or the
// error. Only how the key is read and what is returned differ by kind.

// Get is the runtime's Cache.Get: the hot path, then get.
func (c *Cache[K, V]) Get(ctx context.Context, key K) (*V, error) {
	if c.closed.Load() {
		return nil, opErr(c.layout.ReadOp(), c.key(key), ErrClosed)
	}
	r := rand.Uint32()
	var began time.Time
	if c.obs != nil && sampled(r) {
		began = time.Now()
	}
	cp, held := c.copies.Local.Get(key) // a hit, counted by theine
	if held && cp.Val != nil && c.copies.Fresh(&cp.Meta) {
		// The hot path, flat: hit's first case, without its call.
		c.det.Hit(key, r)
		v := c.clone(cp.Val)
		if !began.IsZero() {
			c.obs.Local(time.Since(began), c.copies.VouchAge(&cp.Meta))
		}
		return v, nil
	}
	return c.get(ctx, key, cp, held, false)
}

// View is the runtime's Cache.View.
func (c *Cache[K, V]) View(ctx context.Context, key K, fn func(*V) error) error {
	if c.closed.Load() {
		return opErr(c.layout.ReadOp(), c.key(key), ErrClosed)
	}
	r := rand.Uint32()
	var began time.Time
	if c.obs != nil && sampled(r) {
		began = time.Now()
	}
	cp, held := c.copies.Local.Get(key)
	if held && cp.Val != nil && c.copies.Fresh(&cp.Meta) {
		c.det.Hit(key, r) // Get's hot path, lending
		if !began.IsZero() {
			c.obs.Local(time.Since(began), c.copies.VouchAge(&cp.Meta))
		}
		return fn(cp.Val)
	}
	v, err := c.get(ctx, key, cp, held, true)
	if err != nil {
		return err
	}
	return fn(v)
}

// get is the rest of Get and View, after the local store's lookup (held,
// its copy cp) found no fresh copy: Get's value is a copy of its own (lend
// false), View's lent (lend true): the held copy itself, or what the read
// shares with the reads that joined it.
func (c *Cache[K, V]) get(ctx context.Context, key K, cp *fresh.Copy[V], held, lend bool) (*V, error) {
	if ok, stale := c.hit(ctx, key, cp, held); ok {
		return c.serve(key, cp, stale, lend)
	}
	ctx, began := c.away(ctx, OpGet)
	v, from, err := c.read(ctx, key, cp, held, lend)
	c.ended(ctx, OpGet, began, from, err)
	return v, err
}

// read reads key from Redis, and from the loader when Redis misses, for
// get, and returns where the answer came from.
func (c *Cache[K, V]) read(ctx context.Context, key K, cp *fresh.Copy[V], held, lend bool) (*V, Outcome, error) {
	e := c.det.Seen(key)
	if e == nil {
		return c.loads.cold(ctx, key)
	}
	c.count.misses.Add(1)
	// The read stops waiting when the breaker opens, as every kind of
	// read does; failed then decides, for them all.
	opened := c.copies.Nodes.Of(c.key(key)).WhenOpened()
	v, from, err := c.loads.resolveUntil(ctx, key, e, missed{}, opened, false)
	switch {
	case err == nil:
		return c.give(v, lend), from, nil
	case redisFailed(err):
		return c.failed(ctx, key, e, cp, held, err, lend)
	}
	return nil, from, err
}

// failed answers a read of key that Redis failed (err), whichever kind of
// read it is (Get, View, GetMany, HGet), each having stopped waiting when
// the key's node's breaker opened: held, cp is the local copy of a key
// (hot: e its entry). An unverified copy beats an error
// (stale-while-error) when its node does not answer a ping either, and
// only then. A copy older than a write Redis took is never served: while
// its node answers, however late, the read waits for Redis a while
// (slowNodeWait), breaker or not. Else the loader answers with
// degrade=loader; else the read fails with err. With stale_reads off a
// copy is never served unvouched, and its read fails as a cold one. An
// error that is not Redis's is returned as it is.
func (c *Cache[K, V]) failed(ctx context.Context, key K, e *fresh.Entry[K], cp *fresh.Copy[V], held bool, err error, lend bool) (*V, Outcome, error) {
	if held && redisFailed(err) {
		if ok, stale := c.copies.Servable(ctx, key, &cp.Meta); ok {
			return c.serveFrom(key, cp, stale, lend)
		}
		// The breaker opened on a node that answered lately: a slow node,
		// or one that just died. Ask Redis: a slow one answers; a dead
		// one refuses the dial, which finds it silent, and the copy,
		// unless a write overtook it, is served.
		if n := c.copies.Nodes.Of(c.key(key)); c.cfg.StaleReads && errors.Is(err, ErrUnavailable) && n.Answering(c.cfg.Clock.Now()) {
			wait, stop := c.slowNodeWait(ctx, key, cp, n)
			defer stop()
			v, from, rerr := c.loads.resolveUntil(ctx, key, e, missed{}, wait, true)
			if rerr == nil {
				return c.give(v, lend), from, nil
			}
			err = rerr
			if ok, stale := c.copies.Servable(ctx, key, &cp.Meta); ok {
				return c.serveFrom(key, cp, stale, lend)
			}
		}
	}
	return c.loads.degrade(ctx, key, err)
}

// give returns v to a reader: itself when lent (View), else a copy of
// the reader's own.
func (c *Cache[K, V]) give(v *V, lend bool) *V {
	if lend {
		return v
	}
	return c.clone(v)
}

// hit judges a lookup of k in the local store (held, its copy cp):
// whether the copy may answer the read, and whether as a stale read (see
// servable). theine counted a hit for a copy held but not served: it is
// counted as passed over, and the read goes to Redis. Every read of a key
// (Get, GetMany, HGet) asks it after its lookup; the freshness protocol
// (internal/fresh) is asked only about a copy held.
func (c *Cache[K, V]) hit(ctx context.Context, k K, cp *fresh.Copy[V], held bool) (ok, stale bool) {
	if !held {
		return false, false
	}
	if cp.Val != nil && c.copies.Fresh(&cp.Meta) {
		return true, false
	}
	if ok, stale = c.copies.Servable(ctx, k, &cp.Meta); ok {
		return true, stale
	}
	c.copies.PassedOver.Add(1)
	return false, false
}

// slowNodeWait returns what ends the wait of a read of key, whose copy
// cp the breaker of its node n keeps from serving, for a node that
// answered lately: closed after SlowFor (a node that stops answering
// meanwhile must not hold a hot read for the client's ReadTimeout), or at
// the first verdict on n after which the copy may be served: the node was
// found silent, not slow (a dial refused, a PING left unanswered). stop
// ends it early.
func (c *Cache[K, V]) slowNodeWait(ctx context.Context, key K, cp *fresh.Copy[V], n *track.Node) (wait <-chan struct{}, stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		end := time.NewTimer(breaker.SlowFor)
		defer end.Stop()
		for {
			judged := n.WhenJudged() // before looking: a verdict meanwhile is not missed
			if ok, _ := c.copies.Servable(ctx, key, &cp.Meta); ok {
				return
			}
			select {
			case <-quit:
				return
			case <-end.C:
				return
			case <-judged:
			}
		}
	}()
	return done, sync.OnceFunc(func() { close(quit) })
}

// served counts a read of key answered from its local copy cp (a hit,
// and a stale read when stale: unverified, served because Redis cannot
// be asked) and returns the copy's value, shared by every reader: nil for
// a row known to be absent.
func (c *Cache[K, V]) served(key K, cp *fresh.Copy[V], stale bool) *V {
	c.det.Hit(key, rand.Uint32())
	if stale {
		c.count.staleReads.Add(1)
	}
	return cp.Val
}

// serve is served for a caller that gets a value of its own, or lent
// (give), or ErrNotFound.
func (c *Cache[K, V]) serve(key K, cp *fresh.Copy[V], stale, lend bool) (*V, error) {
	v := c.served(key, cp, stale)
	if v == nil {
		return nil, opErr(c.layout.ReadOp(), c.key(key), ErrNotFound)
	}
	return c.give(v, lend), nil
}

// serveFrom is serve for a read that went to Redis first (failed): it
// says where the answer came from.
func (c *Cache[K, V]) serveFrom(key K, cp *fresh.Copy[V], stale, lend bool) (*V, Outcome, error) {
	from := Local
	if stale {
		from = Stale
	}
	v, err := c.serve(key, cp, stale, lend)
	return v, from, err
}

// Set is the runtime's Cache.Set.
func (c *Cache[K, V]) Set(ctx context.Context, k K, v *V) error {
	key := c.key(k)
	if c.closed.Load() {
		return opErr("set", key, ErrClosed)
	}
	if v == nil {
		return opErr("set", key, errors.New("the value is nil; call Del to delete it"))
	}
	b, err := c.writes.encoded(key, v)
	if err != nil {
		return opErr("set", key, err)
	}
	return c.writes.one(ctx, "set", c.writes.set(k, key, v, b))
}

// Del is the runtime's Cache.Del.
func (c *Cache[K, V]) Del(ctx context.Context, k K) error {
	key := c.key(k)
	if c.closed.Load() {
		return opErr("del", key, ErrClosed)
	}
	return c.writes.one(ctx, "del", c.writes.del(k, key))
}

// Close is the runtime's Cache.Close.
func (c *Cache[K, V]) Close() error {
	c.closeOnce.Do(func() {
		c.loads.mu.Lock() // no load starts after this
		c.closed.Store(true)
		c.loads.mu.Unlock()
		c.cancel()
		close(c.done)
		c.g.Close()
		if c.hub != nil {
			c.hub.Leave(&c.copies)
		}
		c.copies.Local.Close()
		if c.obs != nil {
			c.obs.Close()
		}
	})
	return nil
}

// way is how the reads of one key travel (see Config.AutoPipeline).
func way(c config.Config) send.Way {
	switch {
	case !c.AutoPipeline:
		return send.Pooled
	case c.Test.Piped:
		return send.Piped
	}
	return send.Lane
}
