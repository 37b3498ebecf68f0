package runtime

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// lockPrefix names rebuild locks: "hotkeygen:lock:" and the entity key.
const lockPrefix = "hotkeygen:lock:"

// unlock deletes a rebuild lock only if it still holds our token: a lock
// that expired and was taken by another process is left alone.
var unlock = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// lockOrWait takes the rebuild lock of key for this process. While another
// process holds it, lockOrWait polls key instead, and returns what that
// process wrote (found true) and the expiry of a copy of it. It gives up waiting once the lock could have
// expired twice, and returns a release func that is a no-op if the lock
// was never taken; a Redis error skips locking, since loading without the
// lock is safer than not loading.
func (c *Cache[K, V]) lockOrWait(ctx context.Context, key string) (v *V, exp int64, found bool, release func(), err error) {
	lock := lockPrefix + key
	token := strconv.FormatUint(rand.Uint64(), 36)
	ttl := c.cfg.RebuildLockTTL
	poll := min(50*time.Millisecond, max(time.Millisecond, ttl/10))
	deadline := time.Now().Add(2 * ttl)
	noop := func() {}
	for {
		ok, err := c.rdb.SetNX(ctx, lock, token, ttl).Result()
		if err != nil {
			c.countRedisError(ctx, err)
			return nil, 0, false, noop, nil
		}
		if ok {
			return nil, 0, false, func() {
				ctx := context.WithoutCancel(ctx)
				if err := unlock.Run(ctx, c.rdb, []string{lock}, token).Err(); err != nil {
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
		v, _, exp, err := c.fetch(ctx, key, false)
		if err == nil || cachedAbsence(err) {
			return v, exp, true, noop, err // written by the lock holder
		}
	}
}
