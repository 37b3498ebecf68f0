package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/rebuild"
)

// loads is a Cache's loading machinery: one read of a key from Redis,
// and from the loader when Redis misses, shared by the callers that miss
// it meanwhile (flights, one per key), the loaders, the count of loads
// landed (see landings) and the slots of loads made because Redis failed.
type loads[K comparable, V any] struct {
	c *Cache[K, V]
	// mu guards flights, and the Cache's closed against a load starting.
	mu      sync.Mutex
	flights map[K]*loadCall[V]
	landed  *landings
	// one and batch are the loader and the batch loader, nil when not
	// given; slots bounds the loader calls made because Redis failed, nil
	// unless degrade=loader.
	one   func(context.Context, K) (*V, error)
	batch func(context.Context, []K) (map[K]*V, error)
	slots chan struct{}
}

// cold reads k, a key that is not hot, from Redis, and when Redis misses
// from the loader, once for every concurrent caller (resolve). The count
// of the key's landed loads is taken before the read (see landings).
func (l *loads[K, V]) cold(ctx context.Context, k K) (*V, error) {
	c := l.c
	c.count.cold.Add(1)
	key := c.key(k)
	landed := l.landed.of(key).Load()
	v, _, _, err := l.fetch(ctx, key, false, false) // no copy: no TTL asked
	if l.one == nil || !needsLoad(err) {
		if err != nil {
			return l.degrade(ctx, k, err)
		}
		return v, nil
	}
	if v, err = l.resolve(ctx, k, nil, missed{err, landed}); err != nil {
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
func (l *loads[K, V]) resolve(ctx context.Context, k K, e *fresh.Entry[K], seen missed) (*V, error) {
	return l.resolveUntil(ctx, k, e, seen, nil, false)
}

// resolveUntil is resolve that stops waiting, with ErrUnavailable, when
// opened is closed: the breaker of the key's node opened while a caller
// with a local copy in hand waited on Redis. The read goes on for the
// others; this caller is answered from the copy at once. A patient read
// asks Redis whatever the breaker says (see loadCall.patient).
func (l *loads[K, V]) resolveUntil(ctx context.Context, k K, e *fresh.Entry[K], seen missed, opened <-chan struct{}, patient bool) (*V, error) {
	c := l.c
	key := c.key(k)
	t := c.copies.Begin(key)
	l.mu.Lock()
	call := l.flights[k]
	// A patient caller does not join a read that gives up on a node
	// believed down: it would be refused with it.
	if call == nil || !call.t.Same(t) || patient && !call.patient {
		if c.closed.Load() {
			l.mu.Unlock()
			return nil, opErr(c.layout.ReadOp(), key, ErrClosed)
		}
		if seen.err != nil && (call != nil || l.landed.of(key).Load() != seen.landed) {
			// A load is in flight that this caller may not share (a
			// write since: its own write-back, perhaps), or one landed
			// after the caller's read: the miss may predate a
			// write-back, so the load reads Redis again.
			seen = missed{}
		}
		call = &loadCall[V]{t: t, patient: patient, after: call, done: make(chan struct{})}
		l.flights[k] = call // before the load can end: flightMu is held
		c.g.Go(func() { l.run(context.WithoutCancel(ctx), k, e, seen.err, call) })
	}
	call.waiters.Add(1)
	l.mu.Unlock()
	select {
	case <-call.done:
		return call.v, call.err
	case <-ctx.Done():
		return nil, opErr(c.layout.ReadOp(), key, ctx.Err())
	case <-opened:
		return nil, opErr(c.layout.ReadOp(), key, t.N.Unavailable())
	}
}

func (l *loads[K, V]) run(ctx context.Context, k K, e *fresh.Entry[K], seen error, call *loadCall[V]) {
	c := l.c
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
		call.v, size, exp, call.err = l.fetch(ctx, key, call.patient, e != nil)
	}
	after := call.after
	call.after = nil // only this goroutine reads it: no chain of loads is kept
	if l.one != nil && needsLoad(call.err) && after != nil {
		select {
		case <-after.done:
			call.v, size, exp, call.err = l.fetch(ctx, key, call.patient, e != nil)
			inRedis = true
		case <-ctx.Done():
		}
	}
	if l.one != nil && needsLoad(call.err) {
		if errors.Is(call.err, ErrDecode) {
			c.writes.drop(ctx, k, key, call.err)
		}
		call.v, exp, inRedis, call.err = l.through(ctx, k, key)
		size = 0 // unknown: the loaded value is not encoded again to count it
	}
	if e != nil && inRedis && (call.err == nil || cachedAbsence(call.err)) {
		c.copies.Keep(e, call.t, call.v, 0, size, exp)
	}
	l.mu.Lock()
	l.landed.of(key).Add(1) // before it leaves flights: see landings
	if l.flights[k] == call {
		delete(l.flights, k)
	}
	l.mu.Unlock()
	close(call.done)
}

// through calls the loader for k, whose Redis key is key, and writes
// the result back: the row with the entity's TTL, or layout.Null for
// NullTTL when the row is absent. Write-backs use SET NX, so a value a
// writer stored while the loader ran is never overwritten by an older row.
// With RebuildLock, a process that finds another loading the key waits for
// its result instead. inRedis reports that Redis holds what was returned
// (our write-back landed, or the lock holder's did): only then may a hot
// key keep it locally, since a write-back refused by SET NX means a writer
// stored something newer. exp is the expiry of a copy of what Redis
// holds then (see live).
func (l *loads[K, V]) through(ctx context.Context, k K, key string) (v *V, exp int64, inRedis bool, err error) {
	c := l.c
	if !c.bloom.MayHold(ctx, key) { // certainly absent: no load, no placeholder
		return nil, 0, false, opErr(c.layout.ReadOp(), key, ErrNotFound)
	}
	if c.cfg.RebuildLock {
		v, exp, found, release, err := l.lockOrWait(ctx, key)
		defer release()
		if found {
			return v, exp, true, err
		}
	}
	c.count.loads.Add(1)
	v, err = group.Unattended(ctx, func() (*V, error) { return l.one(ctx, k) })
	switch {
	case errors.Is(err, group.ErrAbandoned):
		return nil, 0, false, opErr(c.layout.ReadOp(), key, ErrClosed)
	case errors.Is(err, ErrNotFound):
		if c.cfg.NullTTL > 0 {
			inRedis, exp = c.writes.backOne(ctx, k, key, nil, layout.Null)
		}
		return nil, exp, inRedis, opErr(c.layout.ReadOp(), key, ErrNotFound)
	case err != nil:
		c.count.loadErrors.Add(1)
		return nil, 0, false, &opError{Op: "load", Key: key, Err: err} // the user's error, kept whole
	case v == nil:
		c.count.loadErrors.Add(1)
		return nil, 0, false, opErr("load", key, errors.New("the loader returned neither a value nor an error; return an error wrapping runtime.ErrNotFound for an absent row"))
	}
	b, err := c.writes.encoded(key, v)
	switch {
	case errors.Is(err, ErrValueTooLarge):
		c.log.Warn("hotkey: loaded value not written back", "key", operr.Short(key), "err", err)
		return v, 0, false, nil
	case err != nil:
		return nil, 0, false, opErr("load", key, err)
	}
	inRedis, exp = c.writes.backOne(ctx, k, key, v, b)
	return v, exp, inRedis, nil
}

// degrade answers a read that Redis failed (err) from the loader, when
// degrade=loader, at most DegradeLimit at a time: past the limit the read
// fails at once with Redis's error rather than queue on the database.
func (l *loads[K, V]) degrade(ctx context.Context, k K, err error) (*V, error) {
	c := l.c
	if l.slots == nil || !redisFailed(err) {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
		defer func() { <-l.slots }()
	default:
		return nil, err
	}
	c.count.degradedLoads.Add(1)
	v, lerr := l.one(ctx, k)
	if lerr != nil {
		if !errors.Is(lerr, ErrNotFound) {
			c.count.loadErrors.Add(1)
		}
		return nil, &opError{Op: "load", Key: c.key(k), Err: fmt.Errorf("with Redis failing (%v): %w", causeOf(err), lerr)}
	}
	if v == nil {
		return nil, opErr(c.layout.ReadOp(), c.key(k), ErrNotFound)
	}
	return v, nil
}

// lockOrWait takes the rebuild lock of key for this process
// (runtime/internal/rebuild). While another process holds it, lockOrWait
// polls key instead, and returns what that process wrote (found true) and
// the expiry of a copy of it. It gives up waiting once the lock could have
// expired twice, by the wall clock (time.Now): Redis expires the lock in
// its own time, which a Cache's Clock, stopped in tests, does not follow.
// It returns a release func that is a no-op if the lock
// was never taken; a Redis error skips locking, since loading without the
// lock is safer than not loading.
func (l *loads[K, V]) lockOrWait(ctx context.Context, key string) (v *V, exp int64, found bool, release func(), err error) {
	c := l.c
	lock := rebuild.New(c.rdb, key, c.cfg.RebuildLockTTL)
	poll := lock.Poll()
	deadline := time.Now().Add(2 * c.cfg.RebuildLockTTL)
	noop := func() {}
	for {
		ok, err := lock.Take(ctx)
		if err != nil {
			c.count.redisError(ctx, err)
			return nil, 0, false, noop, nil
		}
		if ok {
			return nil, 0, false, func() {
				ctx := context.WithoutCancel(ctx)
				if err := lock.Release(ctx); err != nil {
					c.count.redisError(ctx, err)
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
		v, _, exp, err := l.fetch(ctx, key, false, true)
		if err == nil || cachedAbsence(err) {
			return v, exp, true, noop, err // written by the lock holder
		}
	}
}

// fetch reads and decodes key from Redis, and returns the size of the
// bytes read and the expiry of a copy of them when the caller may keep one
// (keep: the key is hot; see layout.Layout.Read). While the key's node is
// unreachable it fails at once, unless patient.
func (l *loads[K, V]) fetch(ctx context.Context, key string, patient, keep bool) (v *V, size int, exp int64, err error) {
	c := l.c
	var b []byte
	err = l.ask(ctx, key, patient, func(ctx context.Context) (err error) {
		b, exp, err = c.layout.Read(ctx, c.sender, key, keep)
		return err
	})
	if err != nil {
		return nil, 0, 0, opErr(c.layout.ReadOp(), key, err)
	}
	v, err = decodeValue(c, key, b)
	return v, len(b), exp, err
}

// ask sends read, a read of key, to the key's node through its breaker
// (reads.Reader.Ask). Every read of one key goes through it: Get's, the
// flight's, HGet's.
func (l *loads[K, V]) ask(ctx context.Context, key string, patient bool, read func(context.Context) error) error {
	c := l.c
	return c.reader.Ask(ctx, key, patient, read)
}

// sift splits ks into those the filter says may exist, to be loaded,
// and those certainly absent, in one pipeline.
func (l *loads[K, V]) sift(ctx context.Context, ks []K) (maybe []K, absent map[K]bool) {
	c := l.c
	if c.bloom == nil {
		return ks, nil
	}
	keys := make([]string, len(ks))
	for i, k := range ks {
		keys[i] = c.key(k)
	}
	absent = map[K]bool{}
	maybe = ks[:0:0]
	for i, ok := range c.bloom.MayHoldMany(ctx, keys) {
		if ok {
			maybe = append(maybe, ks[i])
		} else {
			absent[ks[i]] = true
		}
	}
	return maybe, absent
}

// many calls the batch loader once for the distinct keys of load and
// writes back what it returns, and placeholders for the rest, in one
// pipeline. A hot key keeps a loaded value only if its write-back landed:
// one refused by SET NX means a writer stored something newer.
func (l *loads[K, V]) many(ctx context.Context, out []*V, load []pending[K, V]) error {
	c := l.c
	seen := make(map[K]bool, len(load))
	ks := make([]K, 0, len(load))
	for _, p := range load {
		if !seen[p.k] {
			seen[p.k] = true
			ks = append(ks, p.k)
		}
	}
	ks, absent := l.sift(ctx, ks)
	var rows map[K]*V
	if len(ks) > 0 {
		c.count.loads.Add(1)
		var err error
		if rows, err = l.batch(ctx, ks); err != nil {
			c.count.loadErrors.Add(1)
			return &opError{Op: fmt.Sprintf("load %d keys", len(ks)), Err: err} // the user's error, kept whole
		}
	}
	var ws []*write[K, V]
	written := map[K]bool{}
	for _, p := range load {
		if written[p.k] {
			continue
		}
		written[p.k] = true
		switch v := rows[p.k]; {
		case absent[p.k]: // the Bloom filter's: nothing to remember
		case v == nil && c.cfg.NullTTL > 0:
			ws = append(ws, c.writes.back(p.k, p.key, p.t, p.e, nil, layout.Null, nil))
		case v != nil:
			b, err := c.writes.encoded(p.key, v)
			if err != nil {
				c.log.Warn("hotkey: loaded value not written back", "key", operr.Short(p.key), "err", err)
				break
			}
			ws = append(ws, c.writes.back(p.k, p.key, p.t, p.e, v, b, nil))
		}
	}
	if errs, _ := c.writes.commit(ctx, ws, nil); errors.Join(errs...) != nil && ctx.Err() == nil {
		c.log.Warn("hotkey: write-back failed", "keys", len(ws), "err", errors.Join(errs...))
	}
	for _, p := range load {
		v := rows[p.k]
		if v != nil {
			out[p.i] = c.clone(v) // the loader's value may be shared by duplicates
		}
	}
	return nil
}

// rows reads the rows of ks through the batch loader, or the loader id by
// id; an absent row is nil in the result.
func (l *loads[K, V]) rows(ctx context.Context, ks []K) (map[K]*V, error) {
	c := l.c
	c.count.loads.Add(1)
	if l.batch != nil {
		rows, err := group.Unattended(ctx, func() (map[K]*V, error) { return l.batch(ctx, ks) })
		if errors.Is(err, group.ErrAbandoned) {
			return nil, err
		}
		if err != nil {
			c.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load: %w", err)
		}
		return rows, nil
	}
	rows := make(map[K]*V, len(ks))
	for _, k := range ks {
		v, err := group.Unattended(ctx, func() (*V, error) { return l.one(ctx, k) })
		switch {
		case errors.Is(err, group.ErrAbandoned):
			return nil, err
		case errors.Is(err, ErrNotFound):
		case err != nil:
			c.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load %q: %w", c.key(k), err)
		default:
			rows[k] = v
		}
	}
	return rows, nil
}
