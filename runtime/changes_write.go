package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
)

// writeSynced writes a synced batch to Redis in one pipeline, as Set and
// Del would key by key: each row of ks found in rows is SET with the
// entity's TTL, and the key of each row that is gone is deleted. Plain SET,
// not the loader's SET NX: the row was read after its mark, so it is at
// least as new as what Redis holds, and a change racing this write marks
// the id again, which syncs it again. Every instance's local copy follows
// through invalidation, this one's at once, as after Set. A row too large
// to store is deleted instead, so Redis never keeps the stale one.
func (c *Cache[K, V]) writeSynced(ctx context.Context, ks []K, rows map[K]*V) error {
	type write struct {
		k    K
		key  string
		v    *V
		size int
		exp  int64 // of a copy of v, should the write land
		t    token
		cmd  redis.Cmder
		add  bloom.Op // the Bloom filter's, nil without one
	}
	writes := make([]write, 0, len(ks))
	pipe := c.rdb.Pipeline()
	sent := c.cfg.Clock.Now() // before anything is sent
	for _, k := range ks {
		w := write{k: k, key: c.key(k), v: rows[k]}
		var b []byte
		if w.v != nil {
			var err error
			if b, err = c.codec.encode(w.v); err != nil {
				return fmt.Errorf("encode %q: %w", w.key, err)
			}
			if err := c.checkSize("write", w.key, len(b)); err != nil {
				c.log.Warn("hotkey: synced row too large to store; its key is deleted instead", "key", w.key, "err", err)
				w.v = nil
			}
		}
		w.t = c.begin(w.key)
		if w.t.n.Down(ctx) {
			return fmt.Errorf("write %q: %w", w.key, w.t.n.Refuse())
		}
		if w.v != nil {
			ttl := c.ttl(c.cfg.TTL)
			w.size, w.exp = len(b), wroteExpiry(sent, ttl)
			w.cmd = pipe.Set(ctx, w.key, b, ttl)
			w.add = c.bloomAddTo(ctx, pipe, w.key)
		} else {
			w.cmd = pipe.Del(ctx, w.key)
		}
		writes = append(writes, w)
	}
	_, _ = pipe.Exec(ctx) // each command's own error is looked at below
	var errs []error
	for _, w := range writes {
		if err := w.cmd.Err(); err != nil {
			c.countRedisError(ctx, err)
			w.t.n.Failed(ctx, err)
			if !breaker.NotSent(err) {
				c.uncertain(w.k, w.key)
			}
			errs = append(errs, fmt.Errorf("write %q: %w", w.key, err))
			continue
		}
		c.announce(ctx, w.key)
		c.wrote(w.k, w.key, w.t, w.v, w.size, w.exp)
		if err := c.bloom.Added(w.add); err != nil {
			// The row is stored but the filter may not know it: the batch
			// is synced again rather than let the id read as absent later.
			errs = append(errs, fmt.Errorf("add %q to the Bloom filter: %w", w.key, err))
		}
	}
	return errors.Join(errs...)
}
