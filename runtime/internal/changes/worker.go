package changes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/background"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/throttle"
	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// Worker syncs a Buffer: it claims the oldest changed ids, reads their
// rows through the entity's loader (Rows), writes them to Redis through
// the repository's write path (Write), hands them to the sync hook and
// acknowledges them. The typed parts are the repository's; the order,
// the claims and what a failure does are the same for every entity, and
// live here. It runs in every repository that has a loader and the
// change buffer on.
type Worker[K comparable, V any] struct {
	Buffer *Buffer
	Entity string
	Batch  int           // sync_batch
	Lease  time.Duration // sync_lease, for the error of a claim that lapsed
	Now    func() time.Time
	Log    *slog.Logger
	// Seize takes the keys of ks for the batch before their rows are
	// read (their leases: a write that follows a later update wins over
	// the rows read now), and returns the write of the rows read after
	// it (deleting the key of a row that is gone), and release, which
	// gives the keys up when no rows will be written. Rows reads the rows
	// of ks, an absent one nil in the result. Hook, nil without one, is
	// WithSyncHook's.
	Seize func(ctx context.Context, ks []K) (write func(ctx context.Context, rows map[K]*V) error, release func(ctx context.Context), err error)
	Rows  func(ctx context.Context, ks []K) (map[K]*V, error)
	Hook  func(context.Context, map[K]*V) error
	lines throttle.Lines // spaces the lines about failed batches
}

// Step is what one step of a Worker did.
type Step struct {
	Claimed, Synced int
}

// Once is one step: it claims the oldest Batch ids, reads their rows,
// writes each to Redis, hands the batch to the hook, and acknowledges it.
// A batch that fails is returned to the buffer at once, unless ctx ended:
// a worker stopped mid-batch behaves as a dead one, whose claims lapse.
func (w *Worker[K, V]) Once(ctx context.Context) (Step, error) {
	cl, err := w.Buffer.Claim(ctx, w.Batch)
	if err != nil || len(cl.IDs) == 0 {
		return Step{}, err
	}
	step := Step{Claimed: len(cl.IDs)}
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
		w.Buffer.CountDropped(len(junk))
		w.Log.Warn("hotkey: dropping change-buffer members that are not ids of the entity", "count", len(junk), "first", fmt.Sprintf("%q", junk[0]))
		if _, err := w.Buffer.Settle(ctx, cl, junk, false); err != nil {
			return step, w.failed(ctx, cl, ids, err)
		}
	}
	if len(ks) == 0 {
		return step, nil
	}
	write, release, err := w.Seize(ctx, ks)
	if err != nil {
		return step, w.failed(ctx, cl, ids, err)
	}
	rows, err := w.Rows(ctx, ks)
	if err != nil {
		release(ctx)
		return step, w.failed(ctx, cl, ids, err)
	}
	if cl.Lapsed(w.Now()) {
		// The claim lapsed while the rows were read: another worker may
		// hold these ids now, and must be the only one writing them.
		release(ctx)
		return step, w.failed(ctx, cl, nil, fmt.Errorf("the claim's lease of %v ran out before the batch was written; raise sync_lease or lower sync_batch", w.Lease))
	}
	if err := write(ctx, rows); err != nil {
		return step, w.failed(ctx, cl, ids, err)
	}
	if w.Hook != nil {
		batch := make(map[K]*V, len(ks))
		for _, k := range ks {
			batch[k] = rows[k]
		}
		if err := callHook(ctx, w.Hook, batch); err != nil {
			return step, w.failed(ctx, cl, ids, fmt.Errorf("sync hook: %w", err))
		}
	}
	n, err := w.Buffer.Settle(ctx, cl, ids, false)
	if err != nil {
		return step, w.failed(ctx, cl, nil, err)
	}
	step.Synced = n
	w.Buffer.CountSynced(n)
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
func (w *Worker[K, V]) failed(ctx context.Context, cl Claim, release []string, err error) error {
	w.Buffer.CountFailure()
	err = fmt.Errorf("hotkey: sync %d changed ids of %s: %w", len(cl.IDs), w.Entity, err)
	if ctx.Err() != nil {
		return err
	}
	if _, rerr := w.Buffer.Settle(ctx, cl, release, true); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if _, ok := w.lines.Allow(w.Now(), time.Minute); ok {
		w.Log.Warn("hotkey: syncing changed rows failed; the batch returns to the buffer and is retried", "err", err)
	}
	return err
}

// Run syncs every every, at each tick of clock, until done is closed or
// ctx ends, batches until one comes back short: a backlog drains at full
// speed, and an idle buffer costs one claim per interval.
func (w *Worker[K, V]) Run(ctx context.Context, clock background.Ticker, every time.Duration, done <-chan struct{}) {
	background.Every(clock, every, done, func() {
		for ctx.Err() == nil {
			step, err := w.Once(ctx)
			w.Buffer.SampleRate()
			if err != nil || step.Claimed < w.Batch {
				return
			}
		}
	})
}
