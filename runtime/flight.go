package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
)

// loadCall is one read of a hot key from Redis, shared by every caller that
// misses the key while it runs.
type loadCall[V any] struct {
	done    chan struct{}
	v       *V
	err     error
	waiters atomic.Int32 // callers sharing the read; read by tests
}

// loadHot reads a hot key from Redis once for all concurrent callers and
// stores it locally. The read runs on a goroutine of its own, so a caller
// whose context ends returns at once without cancelling the read for the
// others; Close cancels and waits for it.
func (c *Cache[V]) loadHot(ctx context.Context, e *hotEntry) (*V, error) {
	c.flightMu.Lock()
	call := c.flights[e.key]
	if call == nil {
		if c.closed.Load() {
			c.flightMu.Unlock()
			return nil, ErrClosed
		}
		call = &loadCall[V]{done: make(chan struct{})}
		c.flights[e.key] = call
		c.wg.Add(1)
		go c.runLoad(context.WithoutCancel(ctx), e, call)
	}
	call.waiters.Add(1)
	c.flightMu.Unlock()
	select {
	case <-call.done:
		return call.v, call.err
	case <-ctx.Done():
		return nil, fmt.Errorf("hotkey: get %q: %w", e.key, ctx.Err())
	}
}

func (c *Cache[V]) runLoad(ctx context.Context, e *hotEntry, call *loadCall[V]) {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()

	gen := e.gen.Load()
	call.v, call.err = c.fetch(ctx, e.key)
	if call.err == nil {
		c.store(e, gen, call.v)
	}
	c.flightMu.Lock()
	delete(c.flights, e.key)
	c.flightMu.Unlock()
	close(call.done)
}
