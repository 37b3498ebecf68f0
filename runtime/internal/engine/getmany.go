package engine

import (
	"context"
	"errors"

	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/hotkeygen/hotkeygen/runtime/internal/reads"
)

// pending is a key of a GetMany that was not a local hit.
type pending[K comparable, V any] struct {
	i   int // index in the caller's keys
	k   K
	key string
	e   *fresh.Entry[K] // nil for a cold key
	cp  *fresh.Copy[V]  // an unverified copy, served if Redis fails
	t   fresh.Token
	// landed is the count of loads landed for key before it was read
	// (see landings).
	landed uint64
	// undecodable is the decode error of the bytes key held, nil when it
	// held none.
	undecodable error
}

// GetMany is the runtime's Cache.GetMany.
func (c *Cache[K, V]) GetMany(ctx context.Context, ks []K) ([]*V, error) {
	if c.closed.Load() {
		return nil, opErr(c.layout.ReadOp(), "", ErrClosed)
	}
	out := make([]*V, len(ks))
	var todo []pending[K, V]
	for i, k := range ks {
		cp, held := c.copies.Local.Get(k)
		if ok, stale := c.hit(ctx, k, cp, held); ok {
			out[i], _ = c.serve(k, cp, stale, false) // nil: known absent
			continue
		}
		p := pending[K, V]{i: i, k: k, key: c.key(k), e: c.det.Seen(k), cp: cp}
		p.t = c.copies.Begin(p.key)
		p.landed = c.loads.landed.of(p.key).Load()
		if p.e != nil {
			c.count.misses.Add(1)
		} else {
			c.count.cold.Add(1)
		}
		todo = append(todo, p)
	}
	if len(todo) == 0 {
		return out, nil
	}
	ctx, began := c.away(ctx, OpMany)
	var from tally
	out, err := c.readMany(ctx, out, todo, &from)
	c.endedMany(ctx, began, len(todo), &from, err)
	return out, err
}

// readMany is the rest of GetMany: it reads todo, the keys no local
// copy answered, into out, and tallies where each answer came from.
func (c *Cache[K, V]) readMany(ctx context.Context, out []*V, todo []pending[K, V], from *tally) ([]*V, error) {
	raw, exps, err := c.readManyUntilOpened(ctx, todo)
	if err != nil {
		return c.serveFailed(ctx, out, todo, err, from)
	}
	var load []pending[K, V]
	for j, p := range todo {
		if raw[j] == nil {
			load = append(load, p)
			continue
		}
		v, err := decodeValue(c, p.key, raw[j])
		switch {
		case errors.Is(err, ErrNotFound): // the placeholder of an absent row
			if p.e != nil {
				c.copies.Keep(p.e, p.t, nil, 0, len(raw[j]), exps.Of(j))
			}
			continue
		case err != nil && c.loads.one == nil:
			return nil, err
		case err != nil:
			if c.loads.batch != nil { // the loader's flight drops them itself
				c.writes.drop(ctx, p.k, p.key, err)
			}
			p.undecodable = err
			load = append(load, p)
			continue
		}
		c.deliver(out, p, v, len(raw[j]), exps.Of(j))
	}
	from[Redis] += len(todo) - len(load)
	if len(load) > 0 {
		if err := c.loadMany(ctx, out, load); err != nil {
			return nil, err
		}
		from[Loaded] += len(load)
	}
	return out, nil
}

// serveFailed answers a GetMany whose Redis read failed with err as Get
// answers a read Redis failed (failed): each key from its local copy when
// it may be served now, or from the loader with degrade=loader. The
// first key neither answers fails the whole read.
func (c *Cache[K, V]) serveFailed(ctx context.Context, out []*V, todo []pending[K, V], err error, from *tally) ([]*V, error) {
	for _, p := range todo {
		v, o, ferr := c.failed(ctx, p.k, p.e, p.cp, p.cp != nil, err, false)
		from[o]++
		switch {
		case ferr == nil:
			out[p.i] = v
		case !errors.Is(ferr, ErrNotFound): // absent, said the copy or the loader
			return nil, ferr
		}
	}
	return out, nil
}

// deliver puts v, read for p, in out, keeping it locally first when p's
// key is hot; size is the length of the bytes it was decoded from, exp
// the key's expiry.
func (c *Cache[K, V]) deliver(out []*V, p pending[K, V], v *V, size int, exp int64) {
	if p.e != nil {
		c.copies.Keep(p.e, p.t, v, 0, size, exp)
		v = c.clone(v)
	}
	out[p.i] = v
}

// readManyUntilOpened reads the keys of todo (reads.Reader's
// ManyUntilOpened): given up when the breaker of a node holding a copy of
// one of them opens.
func (c *Cache[K, V]) readManyUntilOpened(ctx context.Context, todo []pending[K, V]) ([][]byte, reads.Expiries, error) {
	keys, copied, keep := make([]string, len(todo)), make([]bool, len(todo)), make([]bool, len(todo))
	for j, p := range todo {
		keys[j], copied[j], keep[j] = p.key, p.cp != nil, p.e != nil
	}
	return c.reader.ManyUntilOpened(ctx, &c.g, keys, copied, keep)
}

// loadMany fills out for the keys Redis lacked: through the batch loader
// in one call when there is one, else key by key through the loader. With
// neither, the keys stay nil.
func (c *Cache[K, V]) loadMany(ctx context.Context, out []*V, load []pending[K, V]) error {
	switch {
	case c.loads.batch != nil:
		return c.loads.many(ctx, out, load)
	case c.loads.one != nil:
		for _, p := range load {
			miss := p.undecodable
			if miss == nil {
				miss = opErr(c.layout.ReadOp(), p.key, noKey{})
			}
			v, err := c.loads.resolve(ctx, p.k, p.e, missed{miss, p.landed})
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			out[p.i] = c.clone(v)
		}
	}
	return nil
}
