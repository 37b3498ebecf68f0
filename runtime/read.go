package runtime

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// fetch reads and decodes key from Redis, and returns the size of the
// bytes read and the expiry of a copy of them (see layout.Layout.Read).
// While the key's node is unreachable it fails at once, unless patient.
func (c *Cache[K, V]) fetch(ctx context.Context, key string, patient bool) (v *V, size int, exp int64, err error) {
	var b []byte
	err = c.ask(ctx, key, patient, func(ctx context.Context) (err error) {
		b, exp, err = c.store.Read(ctx, c.rdb, key)
		return err
	})
	if err != nil {
		return nil, 0, 0, opErr(c.store.ReadOp(), key, err)
	}
	v, err = c.decodeValue(key, b)
	return v, len(b), exp, err
}

// ask sends read, a read of key, to the key's node through its breaker:
// refused at once while the node is down, unless patient, and abandoned
// when the breaker opens meanwhile. A missing key is noKey; a failure is
// counted and handed to the breaker. Every read of one key goes through
// it: Get's, the flight's, HGet's.
func (c *Cache[K, V]) ask(ctx context.Context, key string, patient bool, read func(context.Context) error) error {
	n := c.copies.nodes.Of(key)
	if !patient && n.Down(ctx) {
		return c.count.refuse(n)
	}
	rctx, release := ctx, func() {}
	if !patient {
		rctx, release = n.UntilOpened(ctx)
	}
	err := read(rctx)
	release()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return noKey{}
	case !patient && n.Unreachable() && ctx.Err() == nil:
		return c.count.refuse(n) // the breaker opened while it waited
	}
	c.countRedisError(ctx, err)
	n.Failed(ctx, err)
	return err
}
