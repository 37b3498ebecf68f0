package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/background"
	"github.com/hotkeygen/hotkeygen/runtime/internal/changes"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/throttle"
	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// syncWorker is a Cache's sync worker: it claims changed ids from the
// change buffer (runtime/internal/changes), reloads their rows through
// the Cache's loader and writes them through its write path. It runs in
// every repository that has a loader and the change buffer on.
type syncWorker[K comparable, V any] struct {
	c    *Cache[K, V]
	hook func(context.Context, map[K]*V) error // WithSyncHook's, nil without one
	log  throttle.Lines                        // spaces the lines about failed batches
}

// syncStep is what one step of the sync worker did.
type syncStep struct {
	claimed, synced int
}

// once is one step of the sync worker: it claims the oldest SyncBatch
// ids, reloads them through the loader, writes each row to Redis through
// the repository's write path (deleting the key of a row that is gone),
// hands the batch to the sync hook, and acknowledges it. A batch that
// fails is returned to the buffer at once, unless ctx ended: a worker
// stopped mid-batch behaves as a dead one, whose claims lapse.
func (w *syncWorker[K, V]) once(ctx context.Context) (syncStep, error) {
	c := w.c
	cl, err := c.chg.Claim(ctx, c.cfg.SyncBatch)
	if err != nil || len(cl.IDs) == 0 {
		return syncStep{}, err
	}
	step := syncStep{claimed: len(cl.IDs)}
	ks := make([]K, 0, len(cl.IDs))
	ids := make([]string, 0, len(cl.IDs))
	var junk []string
	for _, id := range cl.IDs {
		var k K
		if err := wire.Unmarshal([]byte(id), &k); err != nil { // checked: anyone can write the buffer
			junk = append(junk, id)
			continue
		}
		ks = append(ks, k)
		ids = append(ids, id)
	}
	if len(junk) > 0 {
		// Not an id of this entity (another program wrote it): syncing it
		// again can never succeed, so it is dropped, counted and logged.
		c.chg.CountDropped(len(junk))
		c.log.Warn("hotkey: dropping change-buffer members that are not ids of the entity", "count", len(junk), "first", fmt.Sprintf("%q", junk[0]))
		if _, err := c.chg.Settle(ctx, cl, junk, false); err != nil {
			return step, w.failed(ctx, cl, ids, err)
		}
	}
	if len(ks) == 0 {
		return step, nil
	}
	rows, err := w.rows(ctx, ks)
	if err != nil {
		return step, w.failed(ctx, cl, ids, err)
	}
	if cl.Lapsed(c.cfg.Clock.Now()) {
		// The claim lapsed while the rows were read: another worker may
		// hold these ids now, and must be the only one writing them.
		return step, w.failed(ctx, cl, nil, fmt.Errorf("the claim's lease of %v ran out before the batch was written; raise sync_lease or lower sync_batch", c.cfg.SyncLease))
	}
	if err := w.write(ctx, ks, rows); err != nil {
		return step, w.failed(ctx, cl, ids, err)
	}
	if hook := w.hook; hook != nil {
		batch := make(map[K]*V, len(ks))
		for _, k := range ks {
			batch[k] = rows[k]
		}
		if err := callHook(ctx, hook, batch); err != nil {
			return step, w.failed(ctx, cl, ids, fmt.Errorf("sync hook: %w", err))
		}
	}
	n, err := c.chg.Settle(ctx, cl, ids, false)
	if err != nil {
		return step, w.failed(ctx, cl, nil, err)
	}
	step.synced = n
	c.chg.CountSynced(n)
	return step, nil
}

// callHook runs the user's hook, turning a panic into an error so one bad
// batch does not take the worker, and the process, down.
func callHook[K comparable, V any](ctx context.Context, hook func(context.Context, map[K]*V) error, batch map[K]*V) error {
	_, err := group.Unattended(ctx, func() (_ struct{}, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return struct{}{}, hook(ctx, batch)
	})
	return err
}

// failed counts and logs a failed batch and returns its ids (release)
// to the buffer, unless ctx ended: then they are left to lapse. It returns
// the error, wrapped.
func (w *syncWorker[K, V]) failed(ctx context.Context, cl changes.Claim, release []string, err error) error {
	c := w.c
	c.chg.CountFailure()
	err = fmt.Errorf("hotkey: sync %d changed ids of %s: %w", len(cl.IDs), c.cfg.Entity, err)
	if ctx.Err() != nil {
		return err
	}
	if _, rerr := c.chg.Settle(ctx, cl, release, true); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if _, ok := w.log.Allow(c.cfg.Clock.Now(), time.Minute); ok {
		c.log.Warn("hotkey: syncing changed rows failed; the batch returns to the buffer and is retried", "err", err)
	}
	return err
}

// rows reads the rows of ks through the batch loader, or the loader id by
// id; an absent row is nil in the result.
func (w *syncWorker[K, V]) rows(ctx context.Context, ks []K) (map[K]*V, error) {
	c := w.c
	c.count.loads.Add(1)
	if c.loads.batch != nil {
		rows, err := group.Unattended(ctx, func() (map[K]*V, error) { return c.loads.batch(ctx, ks) })
		if errors.Is(err, group.ErrAbandoned) {
			return nil, err
		}
		if err != nil {
			c.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load: %w", err)
		}
		return rows, nil
	}
	rows := make(map[K]*V, len(ks))
	for _, k := range ks {
		v, err := group.Unattended(ctx, func() (*V, error) { return c.loads.one(ctx, k) })
		switch {
		case errors.Is(err, group.ErrAbandoned):
			return nil, err
		case errors.Is(err, ErrNotFound):
		case err != nil:
			c.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load %q: %w", c.key(k), err)
		default:
			rows[k] = v
		}
	}
	return rows, nil
}

// run is the sync worker: every SyncEvery it syncs batches until one
// comes back short, so a backlog drains at full speed and an idle buffer
// costs one claim per interval.
func (w *syncWorker[K, V]) run() {
	c := w.c
	background.Every(c.cfg.Clock, c.cfg.SyncEvery, c.done, func() {
		for c.ctx.Err() == nil {
			step, err := w.once(c.ctx)
			c.chg.SampleRate()
			if err != nil || step.claimed < c.cfg.SyncBatch {
				return
			}
		}
	})
}

// start starts the sync worker when the change buffer is on and there
// is a loader to read rows with. A program that only marks changes, such
// as a binlog reader, needs no loader: workers elsewhere sync them.
func (w *syncWorker[K, V]) start() {
	c := w.c
	if c.chg == nil {
		return
	}
	if c.loads.one == nil && c.loads.batch == nil {
		c.log.Info("hotkey: change buffer without a loader: this repository marks changes, and repositories with a loader sync them")
		return
	}
	c.g.Go(w.run)
}

// write writes a synced batch to Redis in one pipeline, as Set and
// Del would key by key: each row of ks found in rows is SET with the
// entity's TTL, and the key of each row that is gone is deleted. Plain SET,
// not the loader's SET NX: the row was read after its mark, so it is at
// least as new as what Redis holds, and a change racing this write marks
// the id again, which syncs it again. Every instance's local copy follows
// through invalidation, this one's at once, as after Set. A row too large
// to store is deleted instead, so Redis never keeps the stale one.
func (w *syncWorker[K, V]) write(ctx context.Context, ks []K, rows map[K]*V) error {
	c := w.c
	ws := make([]*write[K, V], 0, len(ks))
	for _, k := range ks {
		key, v := c.key(k), rows[k]
		if v == nil {
			ws = append(ws, c.writes.del(k, key))
			continue
		}
		b, err := c.writes.encoded(key, v)
		switch {
		case errors.Is(err, ErrValueTooLarge):
			c.log.Warn("hotkey: synced row too large to store; its key is deleted instead", "key", operr.Short(key), "err", err)
			ws = append(ws, c.writes.del(k, key))
		case err != nil:
			return fmt.Errorf("%q: %w", key, err)
		default:
			ws = append(ws, c.writes.set(k, key, v, b))
		}
	}
	errs, refused := c.writes.commit(ctx, ws, nil)
	if refused != nil {
		return fmt.Errorf("write: %w", refused)
	}
	for i, err := range errs {
		if err != nil {
			errs[i] = fmt.Errorf("write %q: %w", ws[i].key, err)
		}
	}
	return errors.Join(errs...)
}
