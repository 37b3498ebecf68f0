package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/redis/go-redis/v9"
)

// pending is a key of a GetMany that was not a local hit.
type pending[K comparable] struct {
	i   int // index in the caller's keys
	k   K
	key string
	e   *hotEntry[K] // nil for a cold key
	gen uint64
}

// GetMany returns the values of ks, aligned with ks: nil where a key is
// absent. Hot keys are served locally; the rest are read in as few round
// trips as the topology allows (MGET in chunks of 500 on one node, a
// pipeline of GETs on a cluster, whose keys live on many nodes), and keys
// missing from Redis go to the batch loader, or the loader, when one is
// set. Each value returned is the caller's own.
func (c *Cache[K, V]) GetMany(ctx context.Context, ks []K) ([]*V, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	out := make([]*V, len(ks))
	var todo []pending[K]
	for i, k := range ks {
		if v, ok := c.local.Get(k); ok {
			c.det.hit(k, rand.Uint32())
			if c.det.staleRead(k) {
				c.count.staleReads.Add(1)
			}
			if v != nil { // nil: known absent
				out[i] = c.clone(v)
			}
			continue
		}
		c.det.observe(k)
		p := pending[K]{i: i, k: k, key: c.key(k), e: c.det.lookup(k)}
		if p.e != nil {
			p.gen = p.e.gen.Load()
			c.count.misses.Add(1)
		} else {
			c.count.cold.Add(1)
		}
		todo = append(todo, p)
	}
	if len(todo) == 0 {
		return out, nil
	}
	raw, err := c.readMany(ctx, todo)
	if err != nil {
		return nil, err
	}
	var load []pending[K]
	for j, p := range todo {
		if raw[j] == nil {
			load = append(load, p)
			continue
		}
		v, err := c.decodeValue(p.key, raw[j])
		switch {
		case errors.Is(err, ErrNotFound): // the placeholder of an absent row
			if p.e != nil {
				c.store(p.e, p.gen, nil)
			}
			continue
		case err != nil && c.loader == nil && c.batchLoader == nil:
			return nil, err
		case err != nil:
			c.log.Warn("hotkey: deleting a value that does not decode, to reload it", "key", p.key, "err", err)
			c.rdb.Del(ctx, p.key)
			load = append(load, p)
			continue
		}
		c.deliver(out, p, v)
	}
	if len(load) > 0 {
		if err := c.loadMany(ctx, out, load); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// deliver puts v, read for p, in out, storing it locally first when p's
// key is hot.
func (c *Cache[K, V]) deliver(out []*V, p pending[K], v *V) {
	if p.e != nil {
		c.store(p.e, p.gen, v)
		v = c.clone(v)
	}
	out[p.i] = v
}

// readMany returns the bytes of every key of todo, nil where Redis has
// none.
func (c *Cache[K, V]) readMany(ctx context.Context, todo []pending[K]) ([][]byte, error) {
	keys := make([]string, len(todo))
	for j, p := range todo {
		keys[j] = p.key
	}
	raw, errs := c.mget(ctx, keys)
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return raw, nil
}

// loadMany fills out for the keys Redis lacked: through the batch loader
// in one call when there is one, else key by key through the loader. With
// neither, the keys stay nil.
func (c *Cache[K, V]) loadMany(ctx context.Context, out []*V, load []pending[K]) error {
	switch {
	case c.batchLoader != nil:
		return c.batchLoad(ctx, out, load)
	case c.loader != nil:
		for _, p := range load {
			v, err := c.resolve(ctx, p.k, p.e, fmt.Errorf("get %q: %w", p.key, noKey{}))
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
// pipeline.
func (c *Cache[K, V]) batchLoad(ctx context.Context, out []*V, load []pending[K]) error {
	seen := make(map[K]bool, len(load))
	ks := make([]K, 0, len(load))
	for _, p := range load {
		if !seen[p.k] {
			seen[p.k] = true
			ks = append(ks, p.k)
		}
	}
	c.count.loads.Add(1)
	rows, err := c.batchLoader(ctx, ks)
	if err != nil {
		c.count.loadErrors.Add(1)
		return fmt.Errorf("hotkey: load %d keys: %w", len(ks), err)
	}
	pipe := c.rdb.Pipeline()
	written := map[K]bool{}
	for _, p := range load {
		v := rows[p.k]
		if !written[p.k] {
			written[p.k] = true
			switch {
			case v == nil && c.cfg.NullTTL > 0:
				pipe.SetNX(ctx, p.key, nullValue, c.ttl(c.cfg.NullTTL))
			case v != nil:
				if b, err := c.codec.encode(v); err == nil {
					pipe.SetNX(ctx, p.key, b, c.ttl(c.cfg.TTL))
				}
			}
		}
		if v != nil {
			c.deliver(out, p, c.clone(v)) // the loader's value may be shared by duplicates
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		c.count.redisErrors.Add(1)
		c.log.Warn("hotkey: write-back failed", "keys", len(ks), "err", err)
	}
	return nil
}
