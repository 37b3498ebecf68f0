package runtime

import (
	"context"
	"errors"
	"sync/atomic"
)

// loadCall is one read of a key from Redis, and from the loader when Redis
// misses, shared by every caller that misses the key while it runs. Its
// value is shared too: callers hand out clones.
type loadCall[V any] struct {
	// t is what the read knew when it was sent: a caller may share it
	// only if it knows no more (see freshness.go).
	t token
	// patient reads Redis even while the key's node is believed down:
	// the caller holds a copy known to be older than what Redis holds
	// (superseded), which it may not serve, and Redis is its only answer.
	patient bool
	done    chan struct{}
	v       *V
	err     error
	waiters atomic.Int32 // callers sharing the read; read by tests
}

// resolve reads k once for all concurrent callers: from Redis, then from
// the loader if Redis misses; a hot key (e not nil) is then stored locally.
// A caller that has just read Redis passes what it got as seen, so a new
// load does not read it again. A caller joins a read in flight only if no
// invalidation, write or session change was handled since that read was
// sent; otherwise the read may answer from before a write the caller
// already knows of, and the caller starts its own.
// The read runs on a goroutine of its own, so a caller whose context ends
// returns at once without cancelling the read for the others; Close
// cancels and waits for it.
func (c *Cache[K, V]) resolve(ctx context.Context, k K, e *hotEntry[K], seen error) (*V, error) {
	return c.resolveUntil(ctx, k, e, seen, nil, false)
}

// resolveUntil is resolve that stops waiting, with ErrUnavailable, when
// opened is closed: the breaker of the key's node opened while a caller
// with a local copy in hand waited on Redis. The read goes on for the
// others; this caller is answered from the copy at once. A patient read
// asks Redis whatever the breaker says (see loadCall.patient).
func (c *Cache[K, V]) resolveUntil(ctx context.Context, k K, e *hotEntry[K], seen error, opened <-chan struct{}, patient bool) (*V, error) {
	t := c.begin(c.key(k))
	c.flightMu.Lock()
	call := c.flights[k]
	if call == nil || !call.t.same(t) {
		if c.closed.Load() {
			c.flightMu.Unlock()
			return nil, opErr(c.readOp(), c.key(k), ErrClosed)
		}
		call = &loadCall[V]{t: t, patient: patient, done: make(chan struct{})}
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
		return nil, opErr(c.readOp(), c.key(k), ctx.Err())
	case <-opened:
		return nil, opErr(c.readOp(), c.key(k), c.nodes.of(c.key(k)).unavailable())
	}
}

func (c *Cache[K, V]) runLoad(ctx context.Context, k K, e *hotEntry[K], seen error, call *loadCall[V]) {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()

	key := c.key(k)
	inRedis := seen == nil
	var size int
	var exp int64
	if seen != nil {
		call.err = seen
	} else {
		call.v, size, exp, call.err = c.fetchSized(ctx, key, call.patient)
	}
	if c.loader != nil && needsLoad(call.err) {
		if errors.Is(call.err, ErrDecode) {
			// Corrupt bytes: replace them with the row, as go-zero does.
			c.log.Warn("hotkey: deleting a value that does not decode, to reload it", "key", key, "err", call.err)
			if err := c.rdb.Del(ctx, key).Err(); err != nil {
				c.countRedisError(ctx, err)
			}
		}
		call.v, exp, inRedis, call.err = c.loadThrough(ctx, k, key)
		size = 0 // unknown: the loaded value is not encoded again to count it
	}
	if e != nil && inRedis && (call.err == nil || cachedAbsence(call.err)) {
		c.keep(e, call.t, call.v, 0, size, exp)
	}
	c.flightMu.Lock()
	if c.flights[k] == call {
		delete(c.flights, k)
	}
	c.flightMu.Unlock()
	close(call.done)
}
