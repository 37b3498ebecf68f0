package runtime

import (
	"context"
	"errors"
	"hash/maphash"
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
	// after is the load of the same key that was in flight when this one
	// began, which this one could not share: before calling the loader,
	// this one waits for it to land and reads Redis again, where it wrote
	// its row back, so that concurrent misses of a key call the loader
	// once, whatever the reason the second could not share the first
	// (a write, or an invalidation session starting meanwhile). nil when
	// none was.
	after   *loadCall[V]
	done    chan struct{}
	v       *V
	err     error
	waiters atomic.Int32 // callers sharing the read; read by tests
}

// cold reads k, a key that is not hot, from Redis, and when Redis misses
// from the loader, once for every concurrent caller (resolve). The count
// of the key's landed loads is taken before the read (see landings).
func (c *Cache[K, V]) cold(ctx context.Context, k K) (*V, error) {
	c.count.cold.Add(1)
	key := c.key(k)
	landed := c.landed.of(key).Load()
	v, _, _, err := c.fetch(ctx, key, false, false) // no copy: no TTL asked
	if c.loader == nil || !needsLoad(err) {
		if err != nil {
			return c.degrade(ctx, k, err)
		}
		return v, nil
	}
	if v, err = c.resolve(ctx, k, nil, missed{err, landed}); err != nil {
		return nil, err
	}
	return c.clone(v), nil
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
func (c *Cache[K, V]) resolve(ctx context.Context, k K, e *hotEntry[K], seen missed) (*V, error) {
	return c.resolveUntil(ctx, k, e, seen, nil, false)
}

// missed is what a caller read from Redis before it asked for a load:
// err, the miss, and landed, the landings of the key's shard counted
// before the read was sent (see landings). The zero missed is no read:
// the load reads Redis itself.
type missed struct {
	err    error
	landed uint64
}

// landings counts, for each of a few shards of keys, the loads that have
// ended. A load ends after its value is written back to Redis, and is
// counted before it leaves c.flights, so a caller whose Redis read missed
// and who then finds no load in flight knows, by the count it took before
// its read, whether one landed in between: then its miss may predate the
// write-back, and its load reads Redis again instead of calling the
// loader a second time for the same key.
type landings struct {
	seed maphash.Seed
	n    [64]atomic.Uint64
}

func newLandings() *landings { return &landings{seed: maphash.MakeSeed()} }

func (l *landings) of(key string) *atomic.Uint64 {
	return &l.n[maphash.String(l.seed, key)%uint64(len(l.n))]
}

// resolveUntil is resolve that stops waiting, with ErrUnavailable, when
// opened is closed: the breaker of the key's node opened while a caller
// with a local copy in hand waited on Redis. The read goes on for the
// others; this caller is answered from the copy at once. A patient read
// asks Redis whatever the breaker says (see loadCall.patient).
func (c *Cache[K, V]) resolveUntil(ctx context.Context, k K, e *hotEntry[K], seen missed, opened <-chan struct{}, patient bool) (*V, error) {
	key := c.key(k)
	t := c.copies.begin(key)
	c.flightMu.Lock()
	call := c.flights[k]
	// A patient caller does not join a read that gives up on a node
	// believed down: it would be refused with it.
	if call == nil || !call.t.same(t) || patient && !call.patient {
		if c.closed.Load() {
			c.flightMu.Unlock()
			return nil, opErr(c.store.ReadOp(), key, ErrClosed)
		}
		if seen.err != nil && (call != nil || c.landed.of(key).Load() != seen.landed) {
			// A load is in flight that this caller may not share (a
			// write since: its own write-back, perhaps), or one landed
			// after the caller's read: the miss may predate a
			// write-back, so the load reads Redis again.
			seen = missed{}
		}
		call = &loadCall[V]{t: t, patient: patient, after: call, done: make(chan struct{})}
		c.flights[k] = call // before the load can end: flightMu is held
		c.g.Go(func() { c.runLoad(context.WithoutCancel(ctx), k, e, seen.err, call) })
	}
	call.waiters.Add(1)
	c.flightMu.Unlock()
	select {
	case <-call.done:
		return call.v, call.err
	case <-ctx.Done():
		return nil, opErr(c.store.ReadOp(), key, ctx.Err())
	case <-opened:
		return nil, opErr(c.store.ReadOp(), key, t.n.Unavailable())
	}
}

func (c *Cache[K, V]) runLoad(ctx context.Context, k K, e *hotEntry[K], seen error, call *loadCall[V]) {
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
		call.v, size, exp, call.err = c.fetch(ctx, key, call.patient, e != nil)
	}
	after := call.after
	call.after = nil // only this goroutine reads it: no chain of loads is kept
	if c.loader != nil && needsLoad(call.err) && after != nil {
		select {
		case <-after.done:
			call.v, size, exp, call.err = c.fetch(ctx, key, call.patient, e != nil)
			inRedis = true
		case <-ctx.Done():
		}
	}
	if c.loader != nil && needsLoad(call.err) {
		if errors.Is(call.err, ErrDecode) {
			c.drop(ctx, k, key, call.err)
		}
		call.v, exp, inRedis, call.err = c.loadThrough(ctx, k, key)
		size = 0 // unknown: the loaded value is not encoded again to count it
	}
	if e != nil && inRedis && (call.err == nil || cachedAbsence(call.err)) {
		c.copies.keep(e, call.t, call.v, 0, size, exp)
	}
	c.flightMu.Lock()
	c.landed.of(key).Add(1) // before it leaves flights: see landings
	if c.flights[k] == call {
		delete(c.flights, k)
	}
	c.flightMu.Unlock()
	close(call.done)
}
