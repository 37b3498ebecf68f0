package runtime

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// This file is where a Cache writes through its layout (c.store: how its
// values sit in Redis, a String per key or a collection's hash) and
// decodes what it reads. The reads themselves are fetch's, for one
// key, and mget's, for a batch.

// setValue is the SET of a write through the repository: with a filter,
// the key is added to it in the same round trip, and a failed addition
// fails the write, since the id could read as absent later.
func (c *Cache[K, V]) setValue(ctx context.Context, key string, b []byte, ttl time.Duration) error {
	if c.bloom == nil {
		return c.store.Set(ctx, c.rdb, key, b, ttl).Err()
	}
	pipe := c.rdb.Pipeline()
	set := c.store.Set(ctx, pipe, key, b, ttl)
	add := c.bloomAddTo(ctx, pipe, key)
	_, _ = pipe.Exec(ctx)
	if err := set.Err(); err != nil {
		return err
	}
	if err := c.bloom.Added(add); err != nil {
		return fmt.Errorf("add to the Bloom filter: %w", err)
	}
	return nil
}

// writeBack stores what the loader returned unless the key holds a value
// already, and reports whether it did, and the expiry of a copy of what
// it wrote (see layout.Layout.SetNX). A failed write-back costs the next
// reader a load, nothing more, so it is counted and logged but not
// returned.
func (c *Cache[K, V]) writeBack(ctx context.Context, key string, b []byte, ttl time.Duration) (bool, int64) {
	done, exp := c.store.SetNX(ctx, c.rdb, key, b, ttl)
	ok, err := done()
	if err != nil && c.countRedisError(ctx, err) {
		c.log.Warn("hotkey: write-back failed", "key", key, "err", err)
	}
	return ok, exp
}

// writeBackRow is writeBack of a row the loader found, adding its key to
// the filter in the same round trip. A failed addition is counted and
// logged; the read still returns the row. It reports what writeBack
// does.
func (c *Cache[K, V]) writeBackRow(ctx context.Context, key string, b []byte, ttl time.Duration) (bool, int64) {
	if c.bloom == nil {
		return c.writeBack(ctx, key, b, ttl)
	}
	pipe := c.rdb.Pipeline()
	done, exp := c.store.SetNX(ctx, pipe, key, b, ttl)
	add := c.bloomAddTo(ctx, pipe, key)
	_, _ = pipe.Exec(ctx)
	if err := c.bloom.Added(add); err != nil {
		c.log.Warn("hotkey: adding a loaded id to the Bloom filter failed", "key", key, "err", err)
	}
	ok, err := done()
	if err != nil && c.countRedisError(ctx, err) {
		c.log.Warn("hotkey: write-back failed", "key", key, "err", err)
	}
	return ok, exp
}

// dropUndecodable deletes key, whose bytes do not decode (err), so that
// the loader's row replaces them, as go-zero does; a failed delete is
// counted. The read goes on to the loader either way.
func (c *Cache[K, V]) dropUndecodable(ctx context.Context, key string, err error) {
	c.log.Warn("hotkey: deleting a value that does not decode, to reload it", "key", key, "err", err)
	if err := c.store.Del(ctx, c.rdb, key).Err(); err != nil {
		c.countRedisError(ctx, err)
	}
}

// decodeValue turns bytes read from Redis into a value: nil with an error
// wrapping ErrNotFound for layout.Null, or an ErrDecode error. Every read
// of a value, one or a batch, first or refreshed, decodes here.
func (c *Cache[K, V]) decodeValue(key string, b []byte) (*V, error) {
	if bytes.Equal(b, layout.Null) {
		return nil, opErr(c.store.ReadOp(), key, ErrNotFound)
	}
	v, err := decodeRead(c, c.codec, key, b)
	if err != nil {
		return nil, opErr(c.store.ReadOp(), key, err)
	}
	return v, nil
}

// decodeRead decodes b, read from Redis under key, with cd: c's codec, or
// that of a collection's items, one of which HGet reads. A value past the
// size limit is logged (checkSize); bytes that do not decode are counted
// (Stats.DecodeErrors) and fail with ErrDecode.
func decodeRead[T any, K comparable, V any](c *Cache[K, V], cd *codec[T], key string, b []byte) (*T, error) {
	c.checkSize("read", key, len(b))
	v, err := cd.decode(b)
	if err != nil {
		c.count.decodeErrors.Add(1)
		return nil, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return v, nil
}
