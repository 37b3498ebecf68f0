package runtime

import (
	"context"
	"fmt"
	"iter"
)

// The Bloom filter in front of the loader (bloom=on) is
// runtime/internal/bloom's Filter: its bits in Redis, shared by every
// instance, it turns away reads of ids certainly absent once WarmBloom
// has told it every id. This file is its typed glue: ids to keys; the
// writes that add to it take the write path (write.go).

// WarmBloom adds every id ids yields to the Bloom filter, a pipeline per
// thousand, then marks the filter ready: only then does it turn reads of
// absent ids away. ids should walk every id of the database's table, as
// a query of its primary keys does; rows created after the walk began
// reach the filter when they are written through the repository, loaded,
// or synced from the change buffer. It returns how many ids it added.
func (c *Cache[K, V]) WarmBloom(ctx context.Context, ids iter.Seq[K]) (int, error) {
	if c.closed.Load() {
		return 0, opErr("warm the Bloom filter", "", ErrClosed)
	}
	if c.bloom == nil {
		return 0, fmt.Errorf("hotkey: WarmBloom needs the Bloom filter; annotate the entity with bloom=on, or pass runtime.WithBloom(true)")
	}
	n, err := c.bloom.Warm(ctx, func(yield func(string) bool) {
		for k := range ids {
			if !yield(c.key(k)) {
				return
			}
		}
	})
	if err != nil {
		return n, fmt.Errorf("hotkey: warm the Bloom filter of %s %w", c.cfg.Entity, err)
	}
	return n, nil
}

// bloomSift splits ks into those the filter says may exist, to be loaded,
// and those certainly absent, in one pipeline.
func (c *Cache[K, V]) bloomSift(ctx context.Context, ks []K) (maybe []K, absent map[K]bool) {
	if c.bloom == nil {
		return ks, nil
	}
	keys := make([]string, len(ks))
	for i, k := range ks {
		keys[i] = c.key(k)
	}
	absent = map[K]bool{}
	maybe = ks[:0:0]
	for i, ok := range c.bloom.MayHoldMany(ctx, keys) {
		if ok {
			maybe = append(maybe, ks[i])
		} else {
			absent[ks[i]] = true
		}
	}
	return maybe, absent
}
