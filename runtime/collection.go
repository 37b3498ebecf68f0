package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"
)

// CollectionGlue is what generated code supplies for a collection entity
// (layout=hash): items of type V, owned by a key K, each stored in the
// owner's Redis hash under the field its F gives
// (runtime/internal/engine documents each field).
type CollectionGlue[K comparable, F comparable, V any] = engine.CollectionGlue[K, F, V]

// Collection reads and writes collections of items of type V, one Redis
// hash per owner K, with items keyed by F. A whole collection is one
// value to the runtime: hot owners are detected, held decoded in the
// local store, kept fresh and reported exactly as single values are; a
// read of one item of a hot owner is served from that copy.
//
// Items with an expiry (CollectionGlue.Expires) are never returned once
// it has passed, whatever the hash holds; every write also deletes the
// owner's expired items and moves the hash's TTL only forward.
type Collection[K comparable, F comparable, V any] struct {
	e *engine.Collection[K, F, V]
}

// NewCollection returns a Collection over rdb. Options are those of New.
func NewCollection[K comparable, F comparable, V any](rdb redis.UniversalClient, glue CollectionGlue[K, F, V], opts ...Option) (*Collection[K, F, V], error) {
	if rdb == nil {
		return nil, errors.New("hotkey: New needs a Redis client, got nil")
	}
	cfg, err := config.Apply(glue.Defaults, opts)
	if err != nil {
		return nil, err
	}
	e, err := engine.NewCollection(rdb, glue, cfg)
	if err != nil {
		return nil, err
	}
	return &Collection[K, F, V]{e}, nil
}

// MustNewCollection is NewCollection that panics on error, as MustNew is
// New.
func MustNewCollection[K comparable, F comparable, V any](rdb redis.UniversalClient, glue CollectionGlue[K, F, V], opts ...Option) *Collection[K, F, V] {
	c, err := NewCollection(rdb, glue, opts...)
	if err != nil {
		panic(err)
	}
	return c
}

// WithCollectionLoader reads through to the source of truth: when an
// owner's hash is missing from Redis, load returns the owner's whole
// collection, which is written back as the hash. An empty collection, or
// an error wrapping ErrNotFound, is an absent owner, remembered for
// NullTTL.
func WithCollectionLoader[K comparable, F comparable, V any](load func(ctx context.Context, k K) (map[F]*V, error)) Option {
	return WithLoader(func(ctx context.Context, k K) (*map[F]*V, error) {
		m, err := load(ctx, k)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("an empty collection: %w", ErrNotFound)
		}
		return &m, nil
	})
}

// HGetAll returns owner k's collection: the items whose expiry has not
// passed, each the caller's own. An owner without items gives an empty
// map. It runs HGETALL, unless k is hot and held locally.
func (col *Collection[K, F, V]) HGetAll(ctx context.Context, k K) (map[F]*V, error) {
	return col.e.HGetAll(ctx, k)
}

// HGetAllMany returns the collections of ks, aligned with ks, as HGetAll
// does: hot owners from memory, the others with one pipeline of
// HGETALLs (per node, in parallel, on a cluster).
func (col *Collection[K, F, V]) HGetAllMany(ctx context.Context, ks []K) ([]map[F]*V, error) {
	return col.e.HGetAllMany(ctx, ks)
}

// HGet returns item f of owner k, or an error wrapping ErrNotFound when
// there is none or it has expired. A hot owner's item comes from the
// local copy of its collection; a cold one's with HGET, and with a loader
// an HGET that finds nothing reads (or loads) the whole collection.
func (col *Collection[K, F, V]) HGet(ctx context.Context, k K, f F) (*V, error) {
	return col.e.HGet(ctx, k, f)
}

// HSet writes items, each to the hash of its owner under its field: one
// script per owner, all in one round trip (one pipeline), which also
// deletes the owners' expired items and moves each hash's TTL forward
// when an item needs it (see layout.Hash). Each owner's local copy is
// then unverified, so the next read asks Redis and sees the write.
func (col *Collection[K, F, V]) HSet(ctx context.Context, items ...*V) error {
	return col.e.HSet(ctx, items...)
}

// HDel deletes items fs of owner k (and the owner's expired items) in
// one round trip.
func (col *Collection[K, F, V]) HDel(ctx context.Context, k K, fs ...F) error {
	return col.e.HDel(ctx, k, fs...)
}

// Del deletes owner k's whole collection with DEL, in Redis and in memory.
func (col *Collection[K, F, V]) Del(ctx context.Context, k K) error { return col.e.Del(ctx, k) }

// Stats, History and Close are those of a Cache, whose keys are the
// owners.
func (col *Collection[K, F, V]) Stats() Stats      { return col.e.Stats() }
func (col *Collection[K, F, V]) History() []Sample { return col.e.History() }
func (col *Collection[K, F, V]) Close() error      { return col.e.Close() }
