package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
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
		add  bloomOp // the Bloom filter's, nil without one
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
		if c.down(ctx, w.t.n) {
			return fmt.Errorf("write %q: %w", w.key, c.refuse(w.t.n))
		}
		if w.v != nil {
			ttl := c.ttl(c.cfg.TTL)
			w.size, w.exp = len(b), layout.WroteExpiry(sent, ttl)
			w.cmd = c.store.Set(ctx, pipe, w.key, b, ttl)
			w.add = c.bloomAddTo(ctx, pipe, w.key)
		} else {
			w.cmd = c.store.Del(ctx, pipe, w.key)
		}
		writes = append(writes, w)
	}
	_, _ = pipe.Exec(ctx) // each command's own error is looked at below
	var errs []error
	for _, w := range writes {
		if err := w.cmd.Err(); err != nil {
			c.countRedisError(ctx, err)
			c.failed(ctx, w.t.n, err)
			if !notSent(err) {
				c.uncertain(w.k, w.key)
			}
			errs = append(errs, fmt.Errorf("write %q: %w", w.key, err))
			continue
		}
		c.announce(ctx, w.key)
		c.wrote(w.k, w.key, w.t, w.v, w.size, w.exp)
		if err := w.add.err(); err != nil {
			// The row is stored but the filter may not know it: the batch
			// is synced again rather than let the id read as absent later.
			c.bloom.errors.Add(1)
			errs = append(errs, fmt.Errorf("add %q to the Bloom filter: %w", w.key, err))
		}
	}
	return errors.Join(errs...)
}
