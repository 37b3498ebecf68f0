package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime/internal/changes"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
)

// MarkChanged is the runtime's Cache.MarkChanged.
func (c *Cache[K, V]) MarkChanged(ctx context.Context, ks ...K) error {
	if c.closed.Load() {
		return opErr("mark changed", "", ErrClosed)
	}
	if c.chg == nil {
		return errors.New("hotkey: MarkChanged needs the change buffer; annotate the entity with changes=on, or pass runtime.WithChanges(true)")
	}
	if len(ks) == 0 {
		return nil
	}
	ids := make([]string, len(ks))
	for i, k := range ks {
		m, err := msgpack.Marshal(k)
		if err != nil {
			return fmt.Errorf("hotkey: mark %v changed: encode the id: %w", k, err)
		}
		ids[i] = string(m)
	}
	if err := c.chg.Mark(ctx, ids); err != nil {
		c.count.redisError(ctx, err)
		return fmt.Errorf("hotkey: mark %d ids of %s changed: %w", len(ks), c.cfg.Entity, err)
	}
	return nil
}

// bloomName names the Bloom filter of version v of entity: the filter
// holds Redis keys, and a version of 2 or more has keys of its own. A new
// version's filter starts unready, answering "maybe" (internal/bloom)
// until WarmBloom fills it. The change buffer is not versioned: it holds
// ids, which have no shape, and a program that marks them (a binlog
// reader not deployed again) must keep reaching every version's workers.
func bloomName(entity string, v int) string {
	if v <= 1 {
		return entity
	}
	return entity + ":v" + strconv.Itoa(v)
}

// setupChanges makes the change buffer and its sync worker the
// configuration asks for, and checks that they and the Bloom filter (made
// by New, for the loads and the writes) can name their Redis keys after
// the entity.
func setupChanges[K comparable, V any](c *Cache[K, V]) error {
	cfg := c.cfg
	if (cfg.Changes || cfg.Bloom) && cfg.Entity == "" {
		return &config.Error{Option: "changes", Msg: "the change buffer and the Bloom filter name their Redis keys after the entity; pass WithEntity"}
	}
	if cfg.Given.SyncHook != nil {
		hook, ok := cfg.Given.SyncHook.(func(context.Context, map[K]*V) error)
		if !ok {
			return fmt.Errorf("hotkey: the sync hook is a %T, but this cache needs a func(context.Context, map[%T]*%T) error", cfg.Given.SyncHook, *new(K), *new(V))
		}
		c.worker.Hook = hook
	}
	if cfg.Changes {
		c.chg = changes.New(c.rdb, cfg.Entity, changes.Options{Lease: cfg.SyncLease, TTL: cfg.SyncTTL, Clock: cfg.Clock})
		c.worker.Buffer, c.worker.Entity, c.worker.Batch, c.worker.Lease = c.chg, cfg.Entity, cfg.SyncBatch, cfg.SyncLease
		c.worker.Now, c.worker.Log, c.worker.Rows, c.worker.Seize = cfg.Clock.Now, c.log, c.loads.rows, c.writes.seize
	}
	// The sync worker runs where there is a loader to read rows with. A
	// program that only marks changes, such as a binlog reader, needs
	// none: workers elsewhere sync them.
	switch {
	case c.chg == nil:
	case c.loads.one == nil:
		c.log.Info("hotkey: change buffer without a loader: this repository marks changes, and repositories with a loader sync them")
	default:
		c.g.Go(func() { c.worker.Run(c.ctx, cfg.Clock, cfg.SyncEvery, c.done) })
	}
	return nil
}

// The Bloom filter in front of the loader (bloom=on) is
// runtime/internal/bloom's Filter: its bits in Redis, shared by every
// instance, it turns away reads of ids certainly absent once WarmBloom
// has told it every id. This file is its typed glue: ids to keys; the
// writes that add to it take the write path (write.go).

// WarmBloom is the runtime's Cache.WarmBloom.
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
