// Package writes sends a Cache's writes of bytes to Redis through its
// layout: a write through the repository, a loader's write-back, the
// delete of bytes that do not decode. A row's key joins the Bloom filter
// in the same round trip as its write. None of it needs the key or value
// type: the runtime's typed facade encodes the values, and decides what
// to write; what a write does when Redis fails, or when the filter does,
// is the same for every entity, and is tested here alone against a real
// redis-server.
package writes

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
)

// Writer writes a Cache's bytes to Redis. Its fields are set once, when
// the Cache has made its Bloom filter, and never change.
type Writer struct {
	Client redis.UniversalClient
	// Store is how values sit in Redis (runtime/internal/layout).
	Store layout.Layout
	// Bloom is the filter in front of the loader; nil without one.
	Bloom *bloom.Filter
	Log   *slog.Logger
	// Count counts err, a command's failure under ctx, as a Redis error
	// unless it says only that ctx ended, and reports whether it counted.
	Count func(ctx context.Context, err error) bool
}

// AddTo queues the addition of key to the filter on pipe; nil without a
// filter.
func (w *Writer) AddTo(ctx context.Context, pipe redis.Pipeliner, key string) bloom.Op {
	if w.Bloom == nil {
		return nil
	}
	return w.Bloom.AddTo(ctx, pipe, key)
}

// Set is the SET of a write through the repository: with a filter, the
// key is added to it in the same round trip, and a failed addition fails
// the write, since the id could read as absent later.
func (w *Writer) Set(ctx context.Context, key string, b []byte, ttl time.Duration) error {
	if w.Bloom == nil {
		return w.Store.Set(ctx, w.Client, key, b, ttl).Err()
	}
	pipe := w.Client.Pipeline()
	set := w.Store.Set(ctx, pipe, key, b, ttl)
	add := w.AddTo(ctx, pipe, key)
	_, _ = pipe.Exec(ctx)
	if err := set.Err(); err != nil {
		return err
	}
	if err := w.Bloom.Added(add); err != nil {
		return fmt.Errorf("add to the Bloom filter: %w", err)
	}
	return nil
}

// WriteBack stores what the loader returned unless the key holds a value
// already, and reports whether it did, and the expiry of a copy of what
// it wrote (see layout.Layout.SetNX). A failed write-back costs the next
// reader a load, nothing more, so it is counted and logged but not
// returned.
func (w *Writer) WriteBack(ctx context.Context, key string, b []byte, ttl time.Duration) (bool, int64) {
	done, exp := w.Store.SetNX(ctx, w.Client, key, b, ttl)
	ok, err := done()
	if err != nil && w.Count(ctx, err) {
		w.Log.Warn("hotkey: write-back failed", "key", operr.Short(key), "err", err)
	}
	return ok, exp
}

// WriteBackRow is WriteBack of a row the loader found, adding its key to
// the filter in the same round trip. A failed addition is counted and
// logged; the read still returns the row. It reports what WriteBack
// does.
func (w *Writer) WriteBackRow(ctx context.Context, key string, b []byte, ttl time.Duration) (bool, int64) {
	if w.Bloom == nil {
		return w.WriteBack(ctx, key, b, ttl)
	}
	pipe := w.Client.Pipeline()
	done, exp := w.Store.SetNX(ctx, pipe, key, b, ttl)
	add := w.AddTo(ctx, pipe, key)
	_, _ = pipe.Exec(ctx)
	if err := w.Bloom.Added(add); err != nil {
		w.Log.Warn("hotkey: adding a loaded id to the Bloom filter failed", "key", operr.Short(key), "err", err)
	}
	ok, err := done()
	if err != nil && w.Count(ctx, err) {
		w.Log.Warn("hotkey: write-back failed", "key", operr.Short(key), "err", err)
	}
	return ok, exp
}

// Drop deletes key, whose bytes do not decode (err), so that the loader's
// row replaces them, as go-zero does; a failed delete is counted. The
// read goes on to the loader either way.
func (w *Writer) Drop(ctx context.Context, key string, err error) {
	w.Log.Warn("hotkey: deleting a value that does not decode, to reload it", "key", operr.Short(key), "err", err)
	if err := w.Store.Del(ctx, w.Client, key).Err(); err != nil {
		w.Count(ctx, err)
	}
}
