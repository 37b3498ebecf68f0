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
