package runtime

import (
	"context"
	"errors"
	"iter"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"
)

// Glue is what generated code supplies for one entity: how a key becomes
// its Redis key, how to copy and encode a value, and the options annotated
// on it (runtime/internal/engine documents each field).
type Glue[K comparable, V any] = engine.Glue[K, V]

// Cache reads and writes values of type V, identified by keys of type K, in
// Redis, and serves hot keys from a local store. K is the entity's key
// field, or a struct of its key fields: local hits are looked up by K
// itself, so a hit never builds a string. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	e *engine.Cache[K, V]
}

// New returns a Cache over rdb. Options override DefaultConfig, after the
// options annotated on the entity (Glue.Defaults); an invalid result is
// reported as a *ConfigError.
func New[K comparable, V any](rdb redis.UniversalClient, glue Glue[K, V], opts ...Option) (*Cache[K, V], error) {
	if rdb == nil {
		return nil, errors.New("hotkey: New needs a Redis client, got nil")
	}
	if glue.Key == nil || glue.Clone == nil {
		return nil, errors.New("hotkey: New needs Glue with both Key and Clone functions")
	}
	cfg, err := config.Apply(glue.Defaults, opts)
	if err != nil {
		return nil, err
	}
	e, err := engine.New(rdb, glue, cfg)
	if err != nil {
		return nil, err
	}
	return &Cache[K, V]{e}, nil
}

// MustNew is New that panics on error, for options fixed in the code,
// where an error is a programming error. Generated constructors call New
// and return its error; their MustNew<Name>Repo panics as this does.
func MustNew[K comparable, V any](rdb redis.UniversalClient, glue Glue[K, V], opts ...Option) *Cache[K, V] {
	c, err := New(rdb, glue, opts...)
	if err != nil {
		panic(err)
	}
	return c
}

// Get returns the value at key, or an error wrapping ErrNotFound when the
// key is absent. Hot keys are served from the local store; the value
// returned is the caller's own.
func (c *Cache[K, V]) Get(ctx context.Context, key K) (*V, error) {
	return c.e.Get(ctx, key)
}

// View calls fn with the value at key, or returns an error wrapping
// ErrNotFound when the key is absent, as Get does, but lends the value
// instead of copying it: a hot key's read then costs the same whatever
// the value's size. The value may be shared with every other reader of
// the key, so fn must neither change it nor keep it, nor anything it
// holds, after it returns; a caller that needs either uses Get. View
// returns fn's error.
func (c *Cache[K, V]) View(ctx context.Context, key K, fn func(*V) error) error {
	return c.e.View(ctx, key, fn)
}

// GetMany returns the values of ks, aligned with ks: nil where a key is
// absent. Hot keys are served locally; the rest are read in as few round
// trips as the topology allows (MGET in chunks of 500 on one node; on a
// cluster an MGET per hash slot, in one pipeline per node, the nodes in
// parallel: reads.Reader.Many), and keys
// missing from Redis go to the batch loader, or the loader, when one is
// set. Each value returned is the caller's own.
func (c *Cache[K, V]) GetMany(ctx context.Context, ks []K) ([]*V, error) {
	return c.e.GetMany(ctx, ks)
}

// Set writes v to Redis under k with the configured TTL. When k is hot, its
// local copy is replaced before Set returns, so the caller reads its own
// write.
func (c *Cache[K, V]) Set(ctx context.Context, k K, v *V) error {
	return c.e.Set(ctx, k, v)
}

// Del deletes k from Redis, then drops its local copy.
func (c *Cache[K, V]) Del(ctx context.Context, k K) error {
	return c.e.Del(ctx, k)
}

// MarkChanged records that the rows of ks changed in the database, in one
// round trip: the sync worker reloads them and writes them to Redis. An id
// marked several times before it is synced is synced once, after its last
// mark. It needs the change buffer on (changes=on, WithChanges).
func (c *Cache[K, V]) MarkChanged(ctx context.Context, ks ...K) error {
	return c.e.MarkChanged(ctx, ks...)
}

// WarmBloom adds every id ids yields to the Bloom filter, a pipeline per
// thousand, then marks the filter ready: only then does it turn reads of
// absent ids away. ids should walk every id of the database's table, as
// a query of its primary keys does; rows created after the walk began
// reach the filter when they are written through the repository, loaded,
// or synced from the change buffer. It returns how many ids it added.
func (c *Cache[K, V]) WarmBloom(ctx context.Context, ids iter.Seq[K]) (int, error) {
	return c.e.WarmBloom(ctx, ids)
}

// Stats returns a snapshot of the counters and the current hot keys.
func (c *Cache[K, V]) Stats() Stats {
	return c.e.Stats()
}

// History returns the reads, local hits, Redis reads, Redis errors and
// stale reads per second over the last ten minutes, oldest first, one
// sample a second (less often when the background tick is slower).
func (c *Cache[K, V]) History() []Sample {
	return c.e.History()
}

// Close stops the background work and the reads in flight, waits for
// them, and releases the local store. It is safe to call more than once;
// the Redis client is the caller's and stays open.
//
// Close cancels the context of every loader, batch loader and sync hook
// call the Cache made on its own goroutines (a read's load, the change
// buffer's sync), and does not wait for the user's code: a call that
// ignores its context goes on alone after Close returns, and what it
// returns is dropped, neither written to Redis nor kept. The reads that
// were waiting for it fail with ErrClosed. Calls made on the caller's
// goroutine (degrade=loader, GetMany's batch load) are the caller's.
func (c *Cache[K, V]) Close() error {
	return c.e.Close()
}
