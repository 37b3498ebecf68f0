// Package runtime is the engine behind every repository hotkeygen
// generates. It reads and writes msgpack values in Redis, watches per-key
// traffic, serves the few hot keys from an in-process theine cache, keeps
// those local copies fresh, and reports stats. Generated code only supplies
// typed keys, values and a deep-copy function.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/Yiling-J/theine-go"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"
)

// Cache reads and writes values of type V in Redis and serves hot keys from
// a local store. It is safe for concurrent use.
type Cache[V any] struct {
	cfg   Config
	rdb   redis.UniversalClient
	clone func(*V) *V
	log   *slog.Logger

	local *theine.Cache[string, *V]
	det   *detector

	flightMu sync.Mutex // guards flights, and wg.Add against Close
	flights  map[string]*loadCall[V]

	count counters
	// getSnaps holds the total of reads at the start of each slot, for
	// GetQPS over the window.
	getSnaps [ring]atomic.Uint64

	tickMu    sync.Mutex // serialises ticks
	sched     schedule
	ctx       context.Context // cancelled by Close; bounds background I/O
	cancel    context.CancelFunc
	done      chan struct{}
	wg        sync.WaitGroup
	closed    atomic.Bool
	closeOnce sync.Once
}

// New returns a Cache over rdb. clone must return a deep copy of its
// argument: a hot value is shared, and every caller gets its own copy so
// none can change what the next one reads. Options override DefaultConfig;
// an invalid result is reported as a *ConfigError.
func New[V any](rdb redis.UniversalClient, clone func(*V) *V, opts ...Option) (*Cache[V], error) {
	if rdb == nil {
		return nil, errors.New("hotkey: New needs a Redis client, got nil")
	}
	if clone == nil {
		return nil, errors.New("hotkey: New needs a clone function, got nil")
	}
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Entity != "" {
		cfg.Logger = cfg.Logger.With("entity", cfg.Entity)
	}
	local, err := theine.NewBuilder[string, *V](int64(cfg.LocalSize)).Build()
	if err != nil {
		return nil, fmt.Errorf("hotkey: local store: %w", err)
	}
	c := &Cache[V]{
		cfg:     cfg,
		rdb:     rdb,
		clone:   clone,
		log:     cfg.Logger,
		local:   local,
		flights: map[string]*loadCall[V]{},
		done:    make(chan struct{}),
	}
	c.det = newDetector(cfg, local.Delete)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.sched = newSchedule(cfg, cfg.Clock.Now())
	c.wg.Add(1)
	go c.run()
	return c, nil
}

// MustNew is New for generated constructors, whose defaults were validated
// when the code was generated: it panics only if the caller's options are
// invalid, which is a programming error.
func MustNew[V any](rdb redis.UniversalClient, clone func(*V) *V, opts ...Option) *Cache[V] {
	c, err := New(rdb, clone, opts...)
	if err != nil {
		panic(err)
	}
	return c
}

// Get returns the value at key, or an error wrapping ErrNotFound when the
// key is absent. Hot keys are served from the local store; the value
// returned is the caller's own.
func (c *Cache[V]) Get(ctx context.Context, key string) (*V, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if v, ok := c.local.Get(key); ok { // a hit, counted by theine
		c.det.rec.RecordSampled(key, rand.Uint32())
		return c.clone(v), nil
	}
	c.det.observe(key)
	e := c.det.lookup(key)
	if e == nil {
		c.count.cold.Add(1)
		return c.fetch(ctx, key)
	}
	c.count.misses.Add(1)
	v, err := c.loadHot(ctx, e)
	if err != nil {
		return nil, err
	}
	return c.clone(v), nil
}

// store puts v, read from Redis when e's generation was gen, into the local
// store, unless a write, delete or demotion came in between.
func (c *Cache[V]) store(e *hotEntry, gen uint64, v *V) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead || e.gen.Load() != gen {
		return
	}
	c.local.SetWithTTL(e.key, v, 1, c.cfg.LocalTTL)
	e.registered = true
}

// fetch reads and decodes key from Redis.
func (c *Cache[V]) fetch(ctx context.Context, key string) (*V, error) {
	b, err := c.rdb.Get(ctx, key).Bytes()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("get %q: %w", key, ErrNotFound)
		}
		c.count.redisErrors.Add(1)
		return nil, fmt.Errorf("hotkey: get %q: %w", key, err)
	}
	return c.decode(key, b)
}

func (c *Cache[V]) decode(key string, b []byte) (*V, error) {
	v := new(V)
	if err := msgpack.Unmarshal(b, v); err != nil {
		c.count.decodeErrors.Add(1)
		return nil, fmt.Errorf("get %q: %w: %w", key, ErrDecode, err)
	}
	return v, nil
}

// Set writes v to Redis with the configured TTL. When key is hot, its local
// copy is replaced before Set returns, so the caller reads its own write.
func (c *Cache[V]) Set(ctx context.Context, key string, v *V) error {
	if c.closed.Load() {
		return ErrClosed
	}
	b, err := msgpack.Marshal(v)
	if err != nil {
		return fmt.Errorf("hotkey: set %q: encode: %w", key, err)
	}
	before := c.det.lookup(key)
	var gen uint64
	if before != nil {
		gen = before.gen.Load()
	}
	if err := c.rdb.Set(ctx, key, b, c.cfg.TTL).Err(); err != nil {
		c.count.redisErrors.Add(1)
		return fmt.Errorf("hotkey: set %q: %w", key, err)
	}
	e := c.det.lookup(key)
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Replace only if nothing touched the key since before the write;
	// otherwise another write may have landed after ours, and dropping the
	// copy is the only safe choice.
	replace := e == before && e.gen.Load() == gen && !e.dead
	e.gen.Add(1)
	if replace {
		c.local.SetWithTTL(key, c.clone(v), 1, c.cfg.LocalTTL)
		e.registered = true
	} else {
		c.local.Delete(key)
	}
	return nil
}

// Del deletes key from Redis, then drops its local copy.
func (c *Cache[V]) Del(ctx context.Context, key string) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if err := c.rdb.Del(ctx, key).Err(); err != nil {
		c.count.redisErrors.Add(1)
		return fmt.Errorf("hotkey: del %q: %w", key, err)
	}
	if e := c.det.lookup(key); e != nil {
		e.mu.Lock()
		e.gen.Add(1)
		c.local.Delete(key)
		e.mu.Unlock()
	}
	return nil
}

// Close stops the background work and the reads in flight, waits for
// them, and releases the local store. It is safe to call more than once; the Redis client is the
// caller's and stays open.
func (c *Cache[V]) Close() error {
	c.closeOnce.Do(func() {
		c.flightMu.Lock() // no load starts after this
		c.closed.Store(true)
		c.flightMu.Unlock()
		c.cancel()
		close(c.done)
		c.wg.Wait()
		c.local.Close()
	})
	return nil
}
