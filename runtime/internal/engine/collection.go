package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// CollectionGlue is what generated code supplies for a collection entity
// (layout=hash): items of type V, owned by a key K, each stored in the
// owner's Redis hash under the field its F gives.
type CollectionGlue[K comparable, F comparable, V any] struct {
	// Key returns the Redis key of the hash of owner k.
	Key func(K) string
	// Prefix is what every Redis key of the entity starts with, for
	// invalidation tracking.
	Prefix string
	// Version is the version of the items (Glue.Version).
	Version int
	// Clone deep-copies an item.
	Clone func(*V) *V
	// Encode and Decode are the item's generated msgpack codec; either
	// may be nil, for reflection.
	Encode func(v *V, b []byte) ([]byte, error)
	Decode func(v *V, b []byte) error
	// Defaults are the options annotated on the entity (Glue.Defaults).
	Defaults []config.Option
	// Owner returns the key of the collection an item belongs to, from
	// its key fields.
	Owner func(*V) K
	// Field returns an item's field value, and FieldName the hash field
	// it is stored under (escaped as key parts are).
	Field     func(*V) F
	FieldName func(F) string
	// Expires returns an item's own expiry, the zero time for none; nil
	// when the entity has no expires= field. ExpiresKey is that field's
	// key in the item's msgpack map ("ExpiresAt", or its msgpack tag's
	// name), where the write script finds it.
	Expires    func(*V) time.Time
	ExpiresKey string
}

// Collection reads and writes collections of items of type V, one Redis
// hash per owner K, with items keyed by F. A whole collection is one
// value to the runtime: hot owners are detected, held decoded in the
// local store, kept fresh and reported exactly as single values are; a
// read of one item of a hot owner is served from that copy.
//
// Items with an expiry (CollectionGlue.Expires) are never returned once
// it has passed, whatever the hash holds; every write also deletes the
// owner's expired items and moves the hash's TTL only forward (see
// layout.Hash).
type Collection[K comparable, F comparable, V any] struct {
	c      *Cache[K, map[F]*V]
	layout *layout.Hash // the Cache's
	glue   CollectionGlue[K, F, V]
	item   *codec[V]
	clock  config.Clock // the Cache's
}

// NewCollection returns a Collection over rdb, configured by cfg, which
// config.Apply made.
func NewCollection[K comparable, F comparable, V any](rdb redis.UniversalClient, glue CollectionGlue[K, F, V], cfg config.Config) (*Collection[K, F, V], error) {
	if glue.Key == nil || glue.Clone == nil || glue.Owner == nil || glue.Field == nil || glue.FieldName == nil {
		return nil, errors.New("hotkey: NewCollection needs CollectionGlue with Key, Clone, Owner, Field and FieldName")
	}
	if (glue.Expires == nil) != (glue.ExpiresKey == "") {
		return nil, errors.New("hotkey: NewCollection needs CollectionGlue.Expires and ExpiresKey together: the function reads an item's expiry, the key finds it in the item's msgpack")
	}
	// Decoding leaves expired items out, by the clock the Cache uses.
	col := &Collection[K, F, V]{glue: glue, item: newCodec(glue.Encode, glue.Decode), clock: cfg.Clock}
	c, err := New(rdb, Glue[K, map[F]*V]{
		Key:     glue.Key,
		Prefix:  glue.Prefix,
		Version: glue.Version,
		Clone: func(m *map[F]*V) *map[F]*V {
			out := make(map[F]*V, len(*m))
			for f, v := range *m {
				out[f] = glue.Clone(v)
			}
			return &out
		},
		Encode:      col.encodeAll,
		Decode:      col.decodeAll,
		hash:        true,
		hashExpires: glue.ExpiresKey,
	}, cfg)
	if err != nil {
		return nil, err
	}
	col.c, col.layout = c, c.layout.(*layout.Hash)
	return col, nil
}

// HGetAll is the runtime's Collection.HGetAll.
func (col *Collection[K, F, V]) HGetAll(ctx context.Context, k K) (map[F]*V, error) {
	m, err := col.c.Get(ctx, k)
	switch {
	case errors.Is(err, ErrNotFound):
		return map[F]*V{}, nil
	case err != nil:
		return nil, err
	}
	return col.live(*m), nil
}

// HGetAllMany is the runtime's Collection.HGetAllMany.
func (col *Collection[K, F, V]) HGetAllMany(ctx context.Context, ks []K) ([]map[F]*V, error) {
	ms, err := col.c.GetMany(ctx, ks)
	if err != nil {
		return nil, err
	}
	out := make([]map[F]*V, len(ms))
	for i, m := range ms {
		if m == nil {
			out[i] = map[F]*V{}
		} else {
			out[i] = col.live(*m)
		}
	}
	return out, nil
}

// HGet is the runtime's Collection.HGet.
func (col *Collection[K, F, V]) HGet(ctx context.Context, k K, f F) (*V, error) {
	c := col.c
	if c.closed.Load() {
		return nil, opErr("hget", c.key(k), ErrClosed)
	}
	cp, held := c.copies.Local.Get(k)
	if ok, stale := c.hit(ctx, k, cp, held); ok {
		m := c.served(k, cp, stale) // shared: pick clones the item
		if m == nil {
			return nil, opErr(c.layout.ReadOp(), c.key(k), ErrNotFound)
		}
		return col.pick(*m, k, f)
	} else if held || c.det.Lookup(k) != nil {
		// Hot: the whole collection is what is kept locally.
		return col.pickFrom(ctx, k, f)
	}
	if c.det.Seen(k) != nil {
		return col.pickFrom(ctx, k, f)
	}
	c.count.cold.Add(1)
	actx, began := c.away(ctx, OpItem)
	v, from, err := col.readItem(actx, k, f)
	if isNoKey(err) && c.loads.one != nil {
		c.ended(actx, OpItem, began, Redis, nil) // the owner is missing:
		return col.pickFrom(ctx, k, f)           // a read of the owner loads it
	}
	c.ended(actx, OpItem, began, from, err)
	return v, err
}

// readItem reads item f of owner k, which is not hot, from Redis, and
// says where the answer came from.
func (col *Collection[K, F, V]) readItem(ctx context.Context, k K, f F) (*V, Outcome, error) {
	c := col.c
	key, name := c.key(k), col.glue.FieldName(f)
	var b []byte
	err := c.loads.ask(ctx, key, false, func(ctx context.Context) (err error) {
		b, err = col.layout.ReadItem(ctx, c.rdb, key, name)
		return err
	})
	switch {
	case isNoKey(err) && c.loads.one != nil:
		return nil, Redis, err
	case redisFailed(err) && c.loads.slots != nil:
		m, from, err := c.failed(ctx, k, nil, nil, false, err, true) // degrade=loader
		if err != nil {
			return nil, from, err
		}
		v, err := col.pick(*m, k, f)
		return v, from, err
	case err != nil:
		return nil, Redis, fieldErr("hget", key, name, err)
	}
	v, err := decodeRead(c, col.item, key, b)
	if err != nil {
		return nil, Redis, fieldErr("hget", key, name, err)
	}
	if col.expired(v, col.clock.Now()) {
		return nil, Redis, fieldErr("hget", key, name, fmt.Errorf("expired: %w", ErrNotFound))
	}
	return v, Redis, nil
}

// pickFrom reads owner k's whole collection through the Cache, which
// keeps it locally when k is hot, and returns its item f.
func (col *Collection[K, F, V]) pickFrom(ctx context.Context, k K, f F) (*V, error) {
	m, err := col.c.Get(ctx, k)
	if err != nil {
		return nil, err
	}
	return col.pick(*m, k, f) // m is ours already; pick clones one item more
}

// pick returns a copy of item f of m, the collection of k, unless it is
// missing or expired.
func (col *Collection[K, F, V]) pick(m map[F]*V, k K, f F) (*V, error) {
	v := m[f]
	if v == nil || col.expired(v, col.clock.Now()) {
		return nil, fieldErr("hget", col.c.key(k), col.glue.FieldName(f), ErrNotFound)
	}
	return col.glue.Clone(v), nil
}

// HSet is the runtime's Collection.HSet.
func (col *Collection[K, F, V]) HSet(ctx context.Context, items ...*V) error {
	c := col.c
	if c.closed.Load() {
		return opErr("hset", "", ErrClosed)
	}
	type owner struct {
		k     K
		key   string
		items []layout.Item
		vs    []*V
	}
	var owners []*owner
	byKey := map[K]*owner{}
	ttl := c.writes.ttl(false)
	for _, v := range items {
		if v == nil {
			return opErr("hset", "", errors.New("an item is nil"))
		}
		k := col.glue.Owner(v)
		o := byKey[k]
		if o == nil {
			o = &owner{k: k, key: c.key(k)}
			byKey[k] = o
			owners = append(owners, o)
		}
		name := col.glue.FieldName(col.glue.Field(v))
		b, err := sized(&c.sizes, col.item, o.key, v)
		if err != nil {
			return fieldErr("hset", o.key, name, err)
		}
		o.items = append(o.items, layout.Item{Field: name, Value: b, Exp: col.expiry(v)})
		o.vs = append(o.vs, v)
	}
	writes := make([]ownerWrite[K, map[F]*V], len(owners))
	for i, o := range owners {
		set := o.vs
		writes[i] = ownerWrite[K, map[F]*V]{k: o.k, w: col.layout.SetItems(o.key, o.items, ttl),
			apply: func(old *map[F]*V) *map[F]*V {
				m := col.copyOf(old)
				for _, v := range set {
					m[col.glue.Field(v)] = col.glue.Clone(v)
				}
				return &m
			}}
	}
	return col.writeOwners(ctx, "hset", writes)
}

// HDel is the runtime's Collection.HDel.
func (col *Collection[K, F, V]) HDel(ctx context.Context, k K, fs ...F) error {
	c := col.c
	if c.closed.Load() {
		return opErr("hdel", c.key(k), ErrClosed)
	}
	if len(fs) == 0 {
		return nil
	}
	fields := make([]string, len(fs))
	for i, f := range fs {
		fields[i] = col.glue.FieldName(f)
	}
	return col.writeOwners(ctx, "hdel", []ownerWrite[K, map[F]*V]{{k: k, w: col.layout.DelItems(c.key(k), fields),
		apply: func(old *map[F]*V) *map[F]*V {
			m := col.copyOf(old)
			for _, f := range fs {
				delete(m, f)
			}
			return &m
		}}})
}

// copyOf returns a map of its own holding the items of old, a
// collection a local copy holds (nil: none), for a write to change: the
// items themselves are never changed in place, so they are shared.
func (col *Collection[K, F, V]) copyOf(old *map[F]*V) map[F]*V {
	if old == nil {
		return map[F]*V{}
	}
	return maps.Clone(*old)
}

// Del deletes owner k's whole collection with DEL, in Redis and in memory.
func (col *Collection[K, F, V]) Del(ctx context.Context, k K) error { return col.c.Del(ctx, k) }

// Stats, History and Close are those of the underlying Cache, whose keys
// are the owners.
func (col *Collection[K, F, V]) Stats() Stats      { return col.c.Stats() }
func (col *Collection[K, F, V]) History() []Sample { return col.c.History() }
func (col *Collection[K, F, V]) Close() error      { return col.c.Close() }

// expiry is v's own expiry in Unix milliseconds, 0 for none.
func (col *Collection[K, F, V]) expiry(v *V) int64 {
	if col.glue.Expires == nil {
		return 0
	}
	if t := col.glue.Expires(v); !t.IsZero() {
		return max(t.UnixMilli(), 1)
	}
	return 0
}

// expired reports whether v's expiry has passed at now.
func (col *Collection[K, F, V]) expired(v *V, now time.Time) bool {
	if col.glue.Expires == nil {
		return false
	}
	t := col.glue.Expires(v)
	return !t.IsZero() && !t.After(now)
}

// live removes the expired items from m, the caller's own copy.
func (col *Collection[K, F, V]) live(m map[F]*V) map[F]*V {
	if col.glue.Expires == nil {
		return m
	}
	now := col.clock.Now()
	for f, v := range m {
		if col.expired(v, now) {
			delete(m, f)
		}
	}
	return m
}

// encodeAll writes a whole collection in the runtime's form (see
// layout.AppendItem), with each item's expiry, for a loader's
// write-back.
func (col *Collection[K, F, V]) encodeAll(m *map[F]*V, b []byte) ([]byte, error) {
	for _, v := range *m {
		if v == nil {
			continue
		}
		item, err := col.item.encode(v)
		if err != nil {
			return nil, err
		}
		b = layout.AppendItem(b, col.glue.FieldName(col.glue.Field(v)), col.expiry(v), item)
	}
	return b, nil
}

// decodeAll reads a collection from the runtime's form, keyed by each
// item's own field; items already expired are left out.
func (col *Collection[K, F, V]) decodeAll(m *map[F]*V, b []byte) error {
	out := map[F]*V{}
	now := col.clock.Now()
	err := layout.ReadItems(b, func(field string, _ int64, value []byte) error {
		v, err := col.item.decode(value)
		if err != nil {
			return fmt.Errorf("field %q: %w", field, err)
		}
		if col.expired(v, now) {
			return nil
		}
		out[col.glue.Field(v)] = v
		return nil
	})
	*m = out
	return err
}
