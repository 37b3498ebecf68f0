package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// loadCall is one read of a key from Redis, and from the loader when Redis
// misses, shared by every caller that misses the key while it runs. Its
// value is shared too: callers hand out clones.
type loadCall[V any] struct {
	done    chan struct{}
	v       *V
	err     error
	waiters atomic.Int32 // callers sharing the read; read by tests
}

// resolve reads k once for all concurrent callers: from Redis, then from
// the loader if Redis misses; a hot key (e not nil) is then stored locally.
// A caller that has just read Redis passes what it got as seen, so a new
// load does not read it again.
// The read runs on a goroutine of its own, so a caller whose context ends
// returns at once without cancelling the read for the others; Close
// cancels and waits for it.
func (c *Cache[K, V]) resolve(ctx context.Context, k K, e *hotEntry[K], seen error) (*V, error) {
	c.flightMu.Lock()
	call := c.flights[k]
	if call == nil {
		if c.closed.Load() {
			c.flightMu.Unlock()
			return nil, ErrClosed
		}
		call = &loadCall[V]{done: make(chan struct{})}
		c.flights[k] = call
		c.wg.Add(1)
		go c.runLoad(context.WithoutCancel(ctx), k, e, seen, call)
	}
	call.waiters.Add(1)
	c.flightMu.Unlock()
	select {
	case <-call.done:
		return call.v, call.err
	case <-ctx.Done():
		return nil, fmt.Errorf("hotkey: get %q: %w", c.key(k), ctx.Err())
	}
}

func (c *Cache[K, V]) runLoad(ctx context.Context, k K, e *hotEntry[K], seen error, call *loadCall[V]) {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()

	key := c.key(k)
	var gen uint64
	if e != nil {
		gen = e.gen.Load()
	}
	if seen != nil {
		call.err = seen
	} else {
		call.v, call.err = c.fetch(ctx, key)
	}
	if c.loader != nil && needsLoad(call.err) {
		if errors.Is(call.err, ErrDecode) {
			// Corrupt bytes: replace them with the row, as go-zero does.
			c.log.Warn("hotkey: deleting a value that does not decode, to reload it", "key", key, "err", call.err)
			if err := c.rdb.Del(ctx, key).Err(); err != nil {
				c.count.redisErrors.Add(1)
			}
		}
		call.v, call.err = c.loadThrough(ctx, k, key)
	}
	if e != nil && (call.err == nil || cachedAbsence(call.err)) {
		c.store(e, gen, call.v)
	}
	c.flightMu.Lock()
	delete(c.flights, k)
	c.flightMu.Unlock()
	close(call.done)
}
