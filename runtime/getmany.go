package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/reads"
)

// pending is a key of a GetMany that was not a local hit.
type pending[K comparable, V any] struct {
	i   int // index in the caller's keys
	k   K
	key string
	e   *hotEntry[K]  // nil for a cold key
	cp  *localCopy[V] // an unverified copy, served if Redis fails
	t   token
	// landed is the count of loads landed for key before it was read
	// (see landings).
	landed uint64
}

// GetMany returns the values of ks, aligned with ks: nil where a key is
// absent. Hot keys are served locally; the rest are read in as few round
// trips as the topology allows (MGET in chunks of 500 on one node; on a
// cluster an MGET per hash slot, in one pipeline per node, the nodes in
// parallel: reads.Reader.Many), and keys
// missing from Redis go to the batch loader, or the loader, when one is
// set. Each value returned is the caller's own.
func (c *Cache[K, V]) GetMany(ctx context.Context, ks []K) ([]*V, error) {
	if c.closed.Load() {
		return nil, opErr(c.store.ReadOp(), "", ErrClosed)
	}
	out := make([]*V, len(ks))
	var todo []pending[K, V]
	for i, k := range ks {
		cp, held := c.copies.local.Get(k)
		if ok, stale := c.hit(ctx, k, cp, held); ok {
			out[i], _ = c.serve(k, cp, stale) // nil: known absent
			continue
		}
		p := pending[K, V]{i: i, k: k, key: c.key(k), e: c.det.seen(k), cp: cp}
		p.t = c.copies.begin(p.key)
		p.landed = c.landed.of(p.key).Load()
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
	raw, exps, err := c.readManyUntilOpened(ctx, todo)
	if err != nil {
		return c.serveStale(ctx, out, todo, err)
	}
	var load []pending[K, V]
	for j, p := range todo {
		if raw[j] == nil {
			load = append(load, p)
			continue
		}
		v, err := c.decodeValue(p.key, raw[j])
		switch {
		case errors.Is(err, ErrNotFound): // the placeholder of an absent row
			if p.e != nil {
				c.copies.keep(p.e, p.t, nil, 0, len(raw[j]), exps.Of(j))
			}
			continue
		case err != nil && c.loader == nil && c.batchLoader == nil:
			return nil, err
		case err != nil:
			c.drop(ctx, p.k, p.key, err)
			load = append(load, p)
			continue
		}
		c.deliver(out, p, v, len(raw[j]), exps.Of(j))
	}
	if len(load) > 0 {
		if err := c.loadMany(ctx, out, load); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// serveStale answers a GetMany whose Redis read failed with err from the
// unverified local copies of its keys, when every key not served yet has
// one that may be served now (servable: its node does not answer);
// otherwise it returns err.
func (c *Cache[K, V]) serveStale(ctx context.Context, out []*V, todo []pending[K, V], err error) ([]*V, error) {
	if !redisFailed(err) {
		return nil, err
	}
	stale := make([]bool, len(todo))
	for j, p := range todo {
		var ok bool
		if p.cp == nil {
			return nil, err
		}
		if ok, stale[j] = c.copies.servable(ctx, p.k, &p.cp.meta); !ok {
			return nil, err
		}
	}
	for j, p := range todo {
		out[p.i], _ = c.serve(p.k, p.cp, stale[j])
	}
	return out, nil
}

// deliver puts v, read for p, in out, keeping it locally first when p's
// key is hot; size is the length of the bytes it was decoded from, exp
// the key's expiry.
func (c *Cache[K, V]) deliver(out []*V, p pending[K, V], v *V, size int, exp int64) {
	if p.e != nil {
		c.copies.keep(p.e, p.t, v, 0, size, exp)
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
	case c.batchLoader != nil:
		return c.batchLoad(ctx, out, load)
	case c.loader != nil:
		for _, p := range load {
			v, err := c.resolve(ctx, p.k, p.e, missed{opErr(c.store.ReadOp(), p.key, noKey{}), p.landed})
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

// batchLoad calls the batch loader once for the distinct keys of load and
// writes back what it returns, and placeholders for the rest, in one
// pipeline. A hot key keeps a loaded value only if its write-back landed:
// one refused by SET NX means a writer stored something newer.
func (c *Cache[K, V]) batchLoad(ctx context.Context, out []*V, load []pending[K, V]) error {
	seen := make(map[K]bool, len(load))
	ks := make([]K, 0, len(load))
	for _, p := range load {
		if !seen[p.k] {
			seen[p.k] = true
			ks = append(ks, p.k)
		}
	}
	ks, absent := c.bloomSift(ctx, ks)
	var rows map[K]*V
	if len(ks) > 0 {
		c.count.loads.Add(1)
		var err error
		if rows, err = c.batchLoader(ctx, ks); err != nil {
			c.count.loadErrors.Add(1)
			return &opError{Op: fmt.Sprintf("load %d keys", len(ks)), Err: err} // the user's error, kept whole
		}
	}
	var ws []*write[K, V]
	written := map[K]bool{}
	for _, p := range load {
		if written[p.k] {
			continue
		}
		written[p.k] = true
		switch v := rows[p.k]; {
		case absent[p.k]: // the Bloom filter's: nothing to remember
		case v == nil && c.cfg.NullTTL > 0:
			ws = append(ws, c.backWrite(p.k, p.key, p.t, p.e, nil, layout.Null, nil))
		case v != nil:
			b, err := c.encoded(p.key, v)
			if err != nil {
				c.log.Warn("hotkey: loaded value not written back", "key", operr.Short(p.key), "err", err)
				break
			}
			ws = append(ws, c.backWrite(p.k, p.key, p.t, p.e, v, b, nil))
		}
	}
	if errs, _ := c.commit(ctx, ws, nil); errors.Join(errs...) != nil && ctx.Err() == nil {
		c.log.Warn("hotkey: write-back failed", "keys", len(ws), "err", errors.Join(errs...))
	}
	for _, p := range load {
		v := rows[p.k]
		if v != nil {
			out[p.i] = c.clone(v) // the loader's value may be shared by duplicates
		}
	}
	return nil
}
