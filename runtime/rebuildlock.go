package runtime

import (
	"context"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/rebuild"
)

// lockOrWait takes the rebuild lock of key for this process
// (runtime/internal/rebuild). While another process holds it, lockOrWait
// polls key instead, and returns what that process wrote (found true) and
// the expiry of a copy of it. It gives up waiting once the lock could have
// expired twice, by the wall clock (time.Now): Redis expires the lock in
// its own time, which a Cache's Clock, stopped in tests, does not follow.
// It returns a release func that is a no-op if the lock
// was never taken; a Redis error skips locking, since loading without the
// lock is safer than not loading.
func (c *Cache[K, V]) lockOrWait(ctx context.Context, key string) (v *V, exp int64, found bool, release func(), err error) {
	lock := rebuild.New(c.rdb, key, c.cfg.RebuildLockTTL)
	poll := lock.Poll()
	deadline := time.Now().Add(2 * c.cfg.RebuildLockTTL)
	noop := func() {}
	for {
		ok, err := lock.Take(ctx)
		if err != nil {
			c.countRedisError(ctx, err)
			return nil, 0, false, noop, nil
		}
		if ok {
			return nil, 0, false, func() {
				ctx := context.WithoutCancel(ctx)
				if err := lock.Release(ctx); err != nil {
					c.countRedisError(ctx, err)
				}
			}, nil
		}
		if time.Now().After(deadline) {
			return nil, 0, false, noop, nil
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, 0, true, noop, ctx.Err()
		case <-t.C:
		}
		v, _, exp, err := c.fetch(ctx, key, false, true)
		if err == nil || cachedAbsence(err) {
			return v, exp, true, noop, err // written by the lock holder
		}
	}
}
