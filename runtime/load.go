package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
)

// jitter returns the expiry of a write: base spread uniformly
// within ±j (the Jitter option), in whole milliseconds as Redis keeps them.
func jitter(base time.Duration, j float64) time.Duration {
	if base <= 0 || j == 0 {
		return base
	}
	f := 1 + j*(2*rand.Float64()-1)
	return max(time.Millisecond, time.Duration(float64(base)*f).Truncate(time.Millisecond))
}

// loadThrough calls the loader for k, whose Redis key is key, and writes
// the result back: the row with the entity's TTL, or layout.Null for
// NullTTL when the row is absent. Write-backs use SET NX, so a value a
// writer stored while the loader ran is never overwritten by an older row.
// With RebuildLock, a process that finds another loading the key waits for
// its result instead. inRedis reports that Redis holds what was returned
// (our write-back landed, or the lock holder's did): only then may a hot
// key keep it locally, since a write-back refused by SET NX means a writer
// stored something newer. exp is the expiry of a copy of what Redis
// holds then (see live).
func (c *Cache[K, V]) loadThrough(ctx context.Context, k K, key string) (v *V, exp int64, inRedis bool, err error) {
	if !c.bloom.MayHold(ctx, key) { // certainly absent: no load, no placeholder
		return nil, 0, false, opErr(c.store.ReadOp(), key, ErrNotFound)
	}
	if c.cfg.RebuildLock {
		v, exp, found, release, err := c.lockOrWait(ctx, key)
		defer release()
		if found {
			return v, exp, true, err
		}
	}
	c.count.loads.Add(1)
	v, err = group.Unattended(ctx, func() (*V, error) { return c.loader(ctx, k) })
	switch {
	case errors.Is(err, group.ErrAbandoned):
		return nil, 0, false, opErr(c.store.ReadOp(), key, ErrClosed)
	case errors.Is(err, ErrNotFound):
		if c.cfg.NullTTL > 0 {
			inRedis, exp = c.writeBack(ctx, k, key, nil, layout.Null)
		}
		return nil, exp, inRedis, opErr(c.store.ReadOp(), key, ErrNotFound)
	case err != nil:
		c.count.loadErrors.Add(1)
		return nil, 0, false, &opError{Op: "load", Key: key, Err: err} // the user's error, kept whole
	case v == nil:
		c.count.loadErrors.Add(1)
		return nil, 0, false, opErr("load", key, errors.New("the loader returned neither a value nor an error; return an error wrapping runtime.ErrNotFound for an absent row"))
	}
	b, err := c.encoded(key, v)
	switch {
	case errors.Is(err, ErrValueTooLarge):
		c.log.Warn("hotkey: loaded value not written back", "key", operr.Short(key), "err", err)
		return v, 0, false, nil
	case err != nil:
		return nil, 0, false, opErr("load", key, err)
	}
	inRedis, exp = c.writeBack(ctx, k, key, v, b)
	return v, exp, inRedis, nil
}

// writeBack writes back through the write path (backWrite) what the
// loader returned for k, and reports whether it landed, and the expiry
// of a copy of what it wrote. A failed write-back costs the next reader
// a load, nothing more: it is counted and logged, not returned. The
// load's own token keeps its copy (the flight's), so none is given here.
func (c *Cache[K, V]) writeBack(ctx context.Context, k K, key string, v *V, b []byte) (landed bool, exp int64) {
	w := c.backWrite(k, key, token{}, nil, v, b, func(e int64) { landed, exp = true, e })
	errs, refused := c.commit(ctx, []*write[K, V]{w}, nil)
	if refused == nil && errs[0] != nil && ctx.Err() == nil { // a refused one was not sent
		c.log.Warn("hotkey: write-back failed", "key", operr.Short(key), "err", errs[0])
	}
	return landed, exp
}

// degrade answers a read that Redis failed (err) from the loader, when
// degrade=loader, at most DegradeLimit at a time: past the limit the read
// fails at once with Redis's error rather than queue on the database.
func (c *Cache[K, V]) degrade(ctx context.Context, k K, err error) (*V, error) {
	if c.degradeSlots == nil || !redisFailed(err) {
		return nil, err
	}
	select {
	case c.degradeSlots <- struct{}{}:
		defer func() { <-c.degradeSlots }()
	default:
		return nil, err
	}
	c.count.degradedLoads.Add(1)
	v, lerr := c.loader(ctx, k)
	if lerr != nil {
		if !errors.Is(lerr, ErrNotFound) {
			c.count.loadErrors.Add(1)
		}
		return nil, &opError{Op: "load", Key: c.key(k), Err: fmt.Errorf("with Redis failing (%v): %w", causeOf(err), lerr)}
	}
	if v == nil {
		return nil, opErr(c.store.ReadOp(), c.key(k), ErrNotFound)
	}
	return v, nil
}
