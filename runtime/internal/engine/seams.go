package engine

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/background"
	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/changes"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
)

// The seams of the runtime's tests: what they reach of a Cache to set up
// a state, or to see one, that the API does not show. Nothing else calls
// them; each is one step of the engine, named as a test says it.

// Config is the Cache's configuration, resolved.
func (c *Cache[K, V]) Config() config.Config { return c.cfg }

// Client is the Redis client the Cache was made over.
func (c *Cache[K, V]) Client() redis.UniversalClient { return c.rdb }

// Copies are the local copies and the freshness protocol.
func (c *Cache[K, V]) Copies() *fresh.Copies[K, V] { return &c.copies }

// Detector is the hot-key detector.
func (c *Cache[K, V]) Detector() *fresh.Detector[K] { return c.det }

// Bloom is the Bloom filter, nil unless bloom=on.
func (c *Cache[K, V]) Bloom() *bloom.Filter { return c.bloom }

// Context is cancelled by Close.
func (c *Cache[K, V]) Context() context.Context { return c.ctx }

// Refresh reloads the hot copies once, as the background tick does.
func (c *Cache[K, V]) Refresh() { c.refresh.run() }

// SyncOnce runs one step of the change buffer's worker.
func (c *Cache[K, V]) SyncOnce(ctx context.Context) (changes.Step, error) { return c.worker.Once(ctx) }

// Go runs f on a goroutine Close waits for, unless Close began (false).
func (c *Cache[K, V]) Go(f func()) bool { return c.g.Go(f) }

// Tick runs the background tick at now, and waits for the jobs it
// started, which run on goroutines of their own (see background.Job).
func (c *Cache[K, V]) Tick(now time.Time) {
	c.ticker.tick(now)
	for _, j := range []*background.Job{&c.ticker.jobs.report, &c.ticker.jobs.cluster, &c.ticker.jobs.refresh} {
		j.Wait()
	}
}

// TickOnly runs the background tick at now, without waiting for its jobs.
func (c *Cache[K, V]) TickOnly(now time.Time) { c.ticker.tick(now) }

// Report sends the aggregation's report of slot with reads, as the tick
// does when the slot completes.
func (c *Cache[K, V]) Report(slot int64, reads uint64) { c.agg.report(slot, reads) }

// Flight is what a test sees of a load in flight.
type Flight struct {
	// Call is the load's identity: another load of the key is another.
	Call any
	// Waiters counts the callers sharing the load's read.
	Waiters int32
	// Patient reads Redis even while the key's node is believed down.
	Patient bool
}

// InFlight returns the load of k in flight, if there is one.
func (c *Cache[K, V]) InFlight(k K) (Flight, bool) {
	c.loads.mu.Lock()
	defer c.loads.mu.Unlock()
	call := c.loads.flights[k]
	if call == nil {
		return Flight{}, false
	}
	return Flight{Call: call, Waiters: call.waiters.Load(), Patient: call.patient}, true
}

// DegradedLoads counts the loader calls in progress because Redis
// failed (degrade=loader).
func (c *Cache[K, V]) DegradedLoads() int { return len(c.loads.slots) }

// LateLoad is the read of k by a caller that missed in Redis, then
// waited while between ran (another caller's load, say), and only then
// asked for a load: the miss it read, as resolve judges it.
func (c *Cache[K, V]) LateLoad(ctx context.Context, k K, between func()) (v *V, miss, err error) {
	key := c.key(k)
	landed := c.loads.landed.of(key).Load()
	if _, _, _, miss = c.loads.fetch(ctx, key, false, false); !needsLoad(miss) {
		return nil, miss, nil
	}
	between()
	v, err = c.loads.resolve(ctx, k, nil, missed{miss, landed})
	return v, miss, err
}

// TakeLease takes k's lease, as a load does before calling the loader.
func (c *Cache[K, V]) TakeLease(ctx context.Context, k K) error {
	_, _, _, _, err := c.loads.leased(ctx, k, c.key(k), func() {})
	return err
}

// GetAfterLookup is a Get or View whose lookup of the local store found
// cp (held) before it called get.
func (c *Cache[K, V]) GetAfterLookup(ctx context.Context, k K, cp *fresh.Copy[V], held, lend bool) (*V, error) {
	return c.get(ctx, k, cp, held, lend)
}

// Cache is the Cache of the collection, whose keys are the owners.
func (col *Collection[K, F, V]) Cache() *Cache[K, map[F]*V] { return col.c }
