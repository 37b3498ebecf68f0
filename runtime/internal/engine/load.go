package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/reads"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
)

// loads is a Cache's loading machinery: one read of a key from Redis,
// and from the loader when Redis misses, shared by the callers that miss
// it meanwhile (flights, one per key), the loaders, the count of loads
// landed (see landings) and the slots of loads made because Redis failed.
type loads[K comparable, V any] struct {
	rdb    redis.UniversalClient
	layout layout.Layout       // how a key is read
	sender send.Sender         // how a lone read travels
	reader *reads.Reader       // which asks a key's node first
	copies *fresh.Copies[K, V] // whose tokens judge a load, and keep a hot key's
	writes *writer[K, V]       // which writes each load back
	bloom  *bloom.Filter       // nil unless bloom=on
	key    func(K) string
	clone  func(*V) *V
	decode func(key string, b []byte) (*V, error)
	count  *counters
	g      *group.Group    // which the loads run on, and Close waits for
	done   context.Context // ended by Close
	// closed is the Cache's, which Close sets under mu: no load starts
	// after it.
	closed            *atomic.Bool
	log               *slog.Logger
	nullTTL, leaseTTL time.Duration // NullTTL and RebuildLockTTL
	obs               Recorder      // the Cache's, told of each loader call; nil for none

	// mu guards flights, and the Cache's closed against a load starting.
	mu      sync.Mutex
	flights map[K]*loadCall[V]
	landed  *landings
	// one and batch are the loader and the batch loader, nil when not
	// given (one is batch's for one key when only batch was: oneAtATime);
	// slots bounds the loader calls made because Redis failed, nil
	// unless degrade=loader.
	one   func(context.Context, K) (*V, error)
	batch func(context.Context, []K) (map[K]*V, error)
	slots chan struct{}
	// leases is set when a load takes its key's lease (rebuild_lock, on
	// by default; see leased), and lease says how they are kept.
	leases bool
	lease  lease.Keys
	// waits shares one wait on another process's lease among this
	// process's callers (wait).
	waits singleflight.Group
}

// cold reads k, a key that is not hot, from Redis, and when Redis misses
// from the loader, once for every concurrent caller (resolve). The count
// of the key's landed loads is taken before the read (see landings). It
// returns where the answer came from.
func (l *loads[K, V]) cold(ctx context.Context, k K) (*V, Outcome, error) {
	l.count.cold.Add(1)
	key := l.key(k)
	landed := l.landed.of(key).Load()
	v, _, _, err := l.fetch(ctx, key, false, false) // no copy: no TTL asked
	if l.one == nil || !needsLoad(err) {
		if err != nil {
			return l.degrade(ctx, k, err)
		}
		return v, Redis, nil
	}
	// A load may wait for another process's lease: a caller stops
	// waiting when the node's breaker opens, as every cold read fails fast.
	opened := l.copies.Nodes.Of(key).WhenOpened()
	v, from, err := l.resolveUntil(ctx, k, nil, missed{err, landed}, opened, false)
	switch {
	case err == nil:
		return l.clone(v), from, nil
	case redisFailed(err):
		return l.degrade(ctx, k, err)
	}
	return nil, from, err
}

// resolve reads k once for all concurrent callers: from Redis, then from
// the loader if Redis misses; a hot key (e not nil) is then stored locally.
// A caller that has just read Redis passes what it got as seen, so a new
// load does not read it again. A caller joins a read in flight only if no
// invalidation, write or session change was handled since that read was
// sent, and it was sent within the bound (fresh.Token.Shares); otherwise
// the read may answer from before a write the caller already knows of,
// or from before one acknowledged more than the bound before the caller
// began, and the caller starts its own.
// The read runs on a goroutine of its own, so a caller whose context ends
// returns at once without cancelling the read for the others; Close
// cancels and waits for it.
func (l *loads[K, V]) resolve(ctx context.Context, k K, e *fresh.Entry[K], seen missed) (*V, error) {
	v, _, err := l.resolveUntil(ctx, k, e, seen, nil, false)
	return v, err
}

// resolveUntil is resolve that stops waiting, with ErrUnavailable, when
// opened is closed: the breaker of the key's node opened while a caller
// with a local copy in hand waited on Redis. The read goes on for the
// others; this caller is answered from the copy at once. A patient read
// asks Redis whatever the breaker says (see loadCall.patient). It returns
// where the answer came from: Redis, or the load.
func (l *loads[K, V]) resolveUntil(ctx context.Context, k K, e *fresh.Entry[K], seen missed, opened <-chan struct{}, patient bool) (*V, Outcome, error) {
	key := l.key(k)
	t := l.copies.Begin(key)
	l.mu.Lock()
	call := l.flights[k]
	// A patient caller does not join a read that gives up on a node
	// believed down: it would be refused with it.
	if call == nil || !call.t.Shares(t) || patient && !call.patient {
		if l.closed.Load() {
			l.mu.Unlock()
			return nil, Redis, opErr(l.layout.ReadOp(), key, ErrClosed)
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
		l.g.Go(func() { l.run(context.WithoutCancel(ctx), k, e, seen.err, call) })
	}
	call.waiters.Add(1)
	late := call.leased
	l.mu.Unlock()
	select {
	case <-call.done:
		if call.lost && late { // see leased
			return l.resolveUntil(ctx, k, e, missed{}, opened, patient)
		}
		return call.v, call.from, call.err
	case <-ctx.Done():
		return nil, Redis, opErr(l.layout.ReadOp(), key, ctx.Err())
	case <-opened:
		return nil, Redis, opErr(l.layout.ReadOp(), key, t.N.Unavailable())
	}
}

func (l *loads[K, V]) run(ctx context.Context, k K, e *fresh.Entry[K], seen error, call *loadCall[V]) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.done, cancel)()

	key := l.key(k)
	inRedis := seen == nil
	call.from = Redis
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
			l.writes.drop(ctx, k, key, call.err)
		}
		leased := func() { l.mu.Lock(); call.leased = true; l.mu.Unlock() }
		call.from = Loaded
		call.v, exp, inRedis, call.lost, call.err = l.through(ctx, k, key, errors.Is(call.err, ErrDecode), leased)
		size = 0 // unknown: the loaded value is not encoded again to count it
	}
	if e != nil && inRedis && (call.err == nil || cachedAbsence(call.err)) {
		l.copies.Keep(e, call.t, call.v, 0, size, exp)
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
// NullTTL when the row is absent. inRedis reports that Redis holds what
// was returned: only then may a hot key keep it locally. exp is the
// expiry of a copy of what Redis holds then (see live).
//
// With leases (rebuild_lock, on by default) the load takes the key's
// lease first and writes back only while the key still holds it
// (leased); without, it writes back with SET NX, so that a value a writer
// stored while the loader ran is never overwritten by an older row.
// undecodable is set when the key held bytes that did not decode: the
// load goes around them with SET NX, which leaves another build's value
// in place (writer.drop), and they are not decoded again. onLease and
// lost are leased's.
func (l *loads[K, V]) through(ctx context.Context, k K, key string, undecodable bool, onLease func()) (v *V, exp int64, inRedis, lost bool, err error) {
	if !l.bloom.MayHold(ctx, key) { // certainly absent: no load, no placeholder
		return nil, 0, false, false, opErr(l.layout.ReadOp(), key, ErrNotFound)
	}
	if !l.leases || undecodable {
		v, exp, inRedis, err = l.call(ctx, k, key, nil, true)
		return v, exp, inRedis, false, err
	}
	return l.leased(ctx, k, key, onLease)
}

// maxLeaseRounds bounds the leases one load waits for in turn: each
// round ends with another process's lease ended without a row (its holder
// failed, died, or lost it), and a key whose every load fails or is
// overtaken would be waited for for ever. The last round loads without a
// lease and writes nothing back.
const maxLeaseRounds = 8

// leased loads k under its key's lease (runtime/internal/lease): it
// takes the lease where the key is absent (and calls onLease once it
// holds it), calls the loader, and writes the row back only if the key
// still holds the lease. A key that holds another's lease is waited for,
// until its holder ends it, and read again; a key that holds a value
// (written since the caller's miss) is that value.
//
// A lease lost to a write or a delete while the loader ran (lost) is not
// written back, and its row is returned to the caller that started the
// load, which began before the write or delete and may have either row;
// a caller that joined the load after the lease was taken may have begun
// after them, and reads again (resolveUntil).
func (l *loads[K, V]) leased(ctx context.Context, k K, key string, onLease func()) (v *V, exp int64, inRedis, lost bool, err error) {
	for range maxLeaseRounds {
		ls := l.lease.New(key)
		take := ls.Take(ctx)
		err := l.ask(ctx, key, false, func(ctx context.Context) error {
			if err := l.sender.Send(ctx, take); err != nil {
				return err
			}
			return take.Err() // redis.Nil: taken
		})
		switch {
		case isNoKey(err): // taken
			onLease()
			return l.load(ctx, k, key, &ls)
		case err != nil:
			if !breaker.NotSent(err) {
				l.abandon(ctx, ls)
			}
			return nil, 0, false, false, opErr(l.layout.ReadOp(), key, err)
		}
		held, _ := take.Bytes()
		if other, ok := l.lease.Found(key, held); ok {
			outcome, err := l.wait(ctx, other)
			if err != nil {
				return nil, 0, false, false, opErr(l.layout.ReadOp(), key, err)
			}
			if outcome == lease.Absent {
				return nil, 0, false, false, opErr(l.layout.ReadOp(), key, ErrNotFound)
			}
			continue
		}
		held, gone, err := l.written(ctx, key, held)
		switch {
		case gone:
			continue
		case err != nil:
			return nil, 0, false, false, opErr(l.layout.ReadOp(), key, err)
		}
		v, err := l.decode(key, held)
		if errors.Is(err, ErrDecode) { // a value of another build, say: load around it
			break
		}
		// Written since the caller's miss; its TTL was not asked, so a
		// hot key keeps no copy of it (layout.Unasked).
		exp := int64(0)
		if l.reader.LearnsTTL {
			exp = layout.Unasked
		}
		return v, exp, true, false, err
	}
	v, exp, inRedis, err = l.call(ctx, k, key, nil, false)
	return v, exp, inRedis, false, err
}

// wait waits for ls, another process's lease, to end (lease.Wait), and
// returns how it ended. The callers of this process that wait on one
// lease share one wait, one blocked read in Redis, as Get's callers share
// a load: GetMany's do not share loads, and a fleet's instances would
// otherwise each block a read per caller. The wait runs apart, on the
// Cache's goroutines, bounded by the lease's TTL (Redis expires the lease
// in its own time) and by the Cache's Close, which waits for it; each
// caller stops at its own context's end. Close does not wait for the
// read blocked in Redis: it ends there when the lease does.
func (l *loads[K, V]) wait(ctx context.Context, ls lease.Lease) (string, error) {
	found := time.Now()
	ch := make(chan singleflight.Result, 1)
	if !l.g.Go(func() {
		v, err, _ := l.waits.Do(ls.Placeholder(), func() (any, error) {
			ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			defer cancel()
			defer context.AfterFunc(l.done, cancel)()
			// go-redis reads a blocked XREAD's reply until the block ends,
			// context or not: Close must not wait for that (send.Apart).
			var outcome string
			var err error
			if aerr := send.Apart(ctx, func() { outcome, err = ls.Wait(ctx, l.rdb, found) }); aerr != nil {
				return "", aerr
			}
			return outcome, err
		})
		ch <- singleflight.Result{Val: v, Err: err}
	}) {
		return "", ErrClosed
	}
	select {
	case r := <-ch:
		outcome, _ := r.Val.(string)
		switch {
		case r.Err == nil:
		case l.done.Err() != nil:
			return "", ErrClosed // Close ended the wait: no Redis error
		default:
			l.count.redisError(ctx, r.Err)
		}
		return outcome, r.Err
	case <-ctx.Done():
		if l.done.Err() != nil {
			return "", ErrClosed // the load's context, ended by Close
		}
		return "", ctx.Err()
	}
}

// written returns what key holds, given held, what a take of its lease
// found there that was no lease: the value itself, or, for a collection
// (lease.Present), the hash read now. gone says the key was deleted
// since, and the take is to be tried again.
func (l *loads[K, V]) written(ctx context.Context, key string, held []byte) (b []byte, gone bool, err error) {
	if !lease.Present(held) {
		return held, false, nil
	}
	b, _, err = l.layout.Read(ctx, l.sender, key, false)
	if isNoKey(err) {
		return nil, true, nil
	}
	return b, false, err
}

// abandon releases leases this process may hold and will not load
// under: a take sent but not answered (the breaker opened, the connection
// broke), or the takes of a batch given up. Their waiters must not wait
// them out. It runs apart, for up to the lease's TTL, since a node that
// did not answer may do so late; a release deletes a placeholder only if
// it is the lease's own, so releasing one never taken changes nothing.
func (l *loads[K, V]) abandon(ctx context.Context, leases ...lease.Lease) {
	l.g.Go(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.leaseTTL)
		defer cancel()
		defer context.AfterFunc(l.done, cancel)()
		pipe := l.rdb.Pipeline()
		for _, ls := range leases {
			ls.Release(ctx, pipe, lease.Dropped)
		}
		pipe.Exec(ctx) // failed: the placeholders expire
	})
}

// load is leased's call of the loader under ls, which it ends whatever
// happens: with the row written back (inRedis), or lost when a write or a
// delete took the key meanwhile, or released, for the waiters to read the
// key again or, for an absent row, to answer so.
func (l *loads[K, V]) load(ctx context.Context, k K, key string, ls *lease.Lease) (v *V, exp int64, inRedis, lost bool, err error) {
	v, exp, inRedis, err = l.call(ctx, k, key, ls, true)
	switch {
	case inRedis:
		return v, exp, true, false, err
	case ls.Ended(): // the write-back ran, and found the lease gone
		return v, 0, false, true, err
	}
	outcome := lease.Dropped
	if errors.Is(err, ErrNotFound) {
		outcome = lease.Absent
	}
	if rerr := ls.Release(ctx, l.rdb, outcome); rerr != nil {
		l.count.redisError(ctx, rerr) // its waiters wait out the lease
	}
	return v, exp, false, false, err
}

// call calls the loader for k and, when back is set, writes what it
// returned back: under ls, a lease this process holds, or with SET NX
// when ls is nil (see through).
func (l *loads[K, V]) call(ctx context.Context, k K, key string, ls *lease.Lease, back bool) (v *V, exp int64, inRedis bool, err error) {
	l.count.loads.Add(1)
	v, err = group.Unattended(ctx, func() (*V, error) { return l.loadOne(ctx, k) })
	switch {
	case errors.Is(err, group.ErrAbandoned):
		return nil, 0, false, opErr(l.layout.ReadOp(), key, ErrClosed)
	case errors.Is(err, ErrNotFound):
		if l.nullTTL > 0 && back {
			inRedis, exp = l.writes.backOne(ctx, k, key, nil, layout.Null, ls)
		}
		return nil, exp, inRedis, opErr(l.layout.ReadOp(), key, ErrNotFound)
	case err != nil:
		l.count.loadErrors.Add(1)
		return nil, 0, false, &opError{Op: "load", Key: key, Err: err} // the user's error, kept whole
	case v == nil:
		l.count.loadErrors.Add(1)
		return nil, 0, false, opErr("load", key, errors.New("the loader returned neither a value nor an error; return an error wrapping runtime.ErrNotFound for an absent row"))
	}
	b, err := l.writes.encoded(key, v)
	switch {
	case errors.Is(err, ErrValueTooLarge):
		l.log.Warn("hotkey: loaded value not written back", "key", operr.Short(key), "err", err)
		return v, 0, false, nil
	case err != nil:
		return nil, 0, false, opErr("load", key, err)
	case !back:
		return v, 0, false, nil
	}
	inRedis, exp = l.writes.backOne(ctx, k, key, v, b, ls)
	return v, exp, inRedis, nil
}

// degrade answers a read that Redis failed (err) from the loader, when
// degrade=loader, at most DegradeLimit at a time: past the limit the read
// fails at once with Redis's error rather than queue on the database. An
// error that is not Redis's is returned as it is. It returns where the
// answer came from: Loaded, or Redis when Redis's error is the answer.
func (l *loads[K, V]) degrade(ctx context.Context, k K, err error) (*V, Outcome, error) {
	if l.slots == nil || !redisFailed(err) {
		return nil, Redis, err
	}
	select {
	case l.slots <- struct{}{}:
		defer func() { <-l.slots }()
	default:
		return nil, Redis, err
	}
	l.count.degradedLoads.Add(1)
	v, lerr := l.loadOne(ctx, k)
	if lerr != nil {
		if !errors.Is(lerr, ErrNotFound) {
			l.count.loadErrors.Add(1)
		}
		return nil, Loaded, &opError{Op: "load", Key: l.key(k), Err: fmt.Errorf("with Redis failing (%v): %w", causeOf(err), lerr)}
	}
	if v == nil {
		return nil, Loaded, opErr(l.layout.ReadOp(), l.key(k), ErrNotFound)
	}
	return v, Loaded, nil
}

// fetch reads and decodes key from Redis, and returns the size of the
// bytes read and the expiry of a copy of them when the caller may keep one
// (keep: the key is hot; see layout.Layout.Read). While the key's node is
// unreachable it fails at once, unless patient.
func (l *loads[K, V]) fetch(ctx context.Context, key string, patient, keep bool) (v *V, size int, exp int64, err error) {
	var b []byte
	err = l.ask(ctx, key, patient, func(ctx context.Context) (err error) {
		b, exp, err = l.layout.Read(ctx, l.sender, key, keep)
		return err
	})
	if err != nil {
		return nil, 0, 0, opErr(l.layout.ReadOp(), key, err)
	}
	v, err = l.decode(key, b)
	return v, len(b), exp, err
}

// ask sends read, a read of key, to the key's node through its breaker
// (reads.Reader.Ask). Every read of one key goes through it: Get's, the
// flight's, HGet's.
func (l *loads[K, V]) ask(ctx context.Context, key string, patient bool, read func(context.Context) error) error {
	return l.reader.Ask(ctx, key, patient, read)
}

// sift splits ks into those the filter says may exist, to be loaded,
// and those certainly absent, in one pipeline.
func (l *loads[K, V]) sift(ctx context.Context, ks []K) (maybe []K, absent map[K]bool) {
	if l.bloom == nil {
		return ks, nil
	}
	keys := make([]string, len(ks))
	for i, k := range ks {
		keys[i] = l.key(k)
	}
	absent = map[K]bool{}
	maybe = ks[:0:0]
	for i, ok := range l.bloom.MayHoldMany(ctx, keys) {
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
// one refused by SET NX means a writer stored something newer. With
// leases it takes them first (manyLeased).
func (l *loads[K, V]) many(ctx context.Context, out []*V, load []pending[K, V]) error {
	seen := make(map[K]bool, len(load))
	ks := make([]K, 0, len(load))
	for _, p := range load {
		if !seen[p.k] {
			seen[p.k] = true
			ks = append(ks, p.k)
		}
	}
	ks, absent := l.sift(ctx, ks)
	if l.leases {
		return l.manyLeased(ctx, out, load, ks)
	}
	var rows map[K]*V
	if len(ks) > 0 {
		var err error
		if rows, err = l.batchLoad(ctx, ks); err != nil {
			return err
		}
	}
	var ws []*write[K, V]
	written := map[K]bool{}
	for _, p := range load {
		if written[p.k] || absent[p.k] { // the Bloom filter's: nothing to remember
			continue
		}
		written[p.k] = true
		if w := l.backOf(p, rows[p.k], nil, nil); w != nil {
			ws = append(ws, w)
		}
	}
	if errs, _ := l.writes.commit(ctx, ws, nil); errors.Join(errs...) != nil && ctx.Err() == nil {
		l.log.Warn("hotkey: write-back failed", "keys", len(ws), "err", errors.Join(errs...))
	}
	for _, p := range load {
		if v := rows[p.k]; v != nil {
			out[p.i] = l.clone(v) // the loader's value may be shared by duplicates
		}
	}
	return nil
}

// backOf is the write-back of v, the row loaded for p (nil: absent), under
// ls when not nil: the row, or the absent row's placeholder for null_ttl;
// nil when nothing is to be written (an absent row without null_ttl, a row
// too large to store). landed, when not nil, is called if it lands.
func (l *loads[K, V]) backOf(p pending[K, V], v *V, ls *lease.Lease, landed func()) *write[K, V] {
	if v == nil {
		if l.nullTTL <= 0 {
			return nil
		}
		return l.writes.back(p.k, p.key, p.t, p.e, nil, layout.Null, kept(landed), ls)
	}
	b, err := l.writes.encoded(p.key, v)
	if err != nil {
		l.log.Warn("hotkey: loaded value not written back", "key", operr.Short(p.key), "err", err)
		return nil
	}
	return l.writes.back(p.k, p.key, p.t, p.e, v, b, kept(landed), ls)
}

// kept adapts landed to back's kept, which also learns the expiry.
func kept(landed func()) func(int64) {
	if landed == nil {
		return nil
	}
	return func(int64) { landed() }
}

// manyLeased is many under leases, as leased is a load of one key: in
// rounds, each taking the leases of the keys still to be read in one
// pipeline, calling the batch loader once for those it took, writing
// their rows back under them in one pipeline and ending them, and waiting
// for the leases other processes held. A key that held a value is that
// value; a key whose lease was lost, or whose other holder did not land a
// row, is read again in the next round. The last round loads without
// leases and writes nothing back.
func (l *loads[K, V]) manyLeased(ctx context.Context, out []*V, load []pending[K, V], ks []K) error {
	first := make(map[K]pending[K, V], len(ks)) // the pending that stands for its key
	for _, p := range load {
		if _, ok := first[p.k]; !ok {
			first[p.k] = p
		}
	}
	got := make(map[K]*V, len(ks)) // each key's answer: its row, nil when absent
	for round := 0; len(ks) > 0; round++ {
		if round == maxLeaseRounds-1 {
			rows, err := l.batchLoad(ctx, ks)
			if err != nil {
				return err
			}
			for _, k := range ks {
				got[k] = rows[k]
			}
			break
		}
		leases := make([]lease.Lease, len(ks))
		takes := make([]*redis.StringCmd, len(ks))
		pipe := l.rdb.Pipeline()
		for i, k := range ks {
			leases[i] = l.lease.New(first[k].key)
			takes[i] = leases[i].Take(ctx)
			pipe.Process(ctx, takes[i])
		}
		pipe.Exec(ctx) // each take's own error is read below
		var taken []int
		var waits []lease.Lease // other processes' leases, on the keys of waited
		var waited, again []K
		for i, k := range ks {
			held, err := takes[i].Bytes()
			switch {
			case errors.Is(err, redis.Nil):
				taken = append(taken, i)
				continue
			case err != nil:
				l.count.redisError(ctx, err)
				l.abandon(ctx, leases...) // those taken are not loaded
				return opErr(l.layout.ReadOp(), first[k].key, err)
			}
			if other, ok := l.lease.Found(first[k].key, held); ok {
				waits, waited = append(waits, other), append(waited, k)
				continue
			}
			held, gone, err := l.written(ctx, first[k].key, held)
			switch {
			case gone:
				again = append(again, k)
				continue
			case err != nil:
				l.abandon(ctx, leases...)
				return opErr(l.layout.ReadOp(), first[k].key, err)
			}
			v, err := l.decode(first[k].key, held)
			switch {
			case errors.Is(err, ErrNotFound): // the placeholder of an absent row
				got[k] = nil
			case err != nil:
				l.abandon(ctx, leases...)
				return err
			default:
				got[k] = v
			}
		}
		if len(taken) > 0 {
			if err := l.loadLeased(ctx, first, ks, taken, leases, got); err != nil {
				return err
			}
		}
		var landed []K
		for i, ls := range waits {
			outcome, err := l.wait(ctx, ls)
			switch {
			case err != nil:
				return opErr(l.layout.ReadOp(), first[waited[i]].key, err)
			case outcome == lease.Absent:
				got[waited[i]] = nil
			case outcome == lease.Landed || outcome == lease.Lost || outcome == lease.Gone:
				// The key holds a row, or what a write left, or nothing:
				// read it; an absent key is taken again.
				landed = append(landed, waited[i])
			default:
				again = append(again, waited[i])
			}
		}
		more, err := l.readLanded(ctx, first, landed, got)
		if err != nil {
			return err
		}
		ks = append(again, more...)
	}
	for _, p := range load {
		if v := got[p.k]; v != nil {
			out[p.i] = l.clone(v)
		}
	}
	return nil
}

// readLanded reads the keys of ks, whose leases other processes ended
// with the key written (a row landed, a write or a delete won, or the
// lease had ended before the wait began) while this caller waited, as Get
// reads a key: through its flight (resolve), so that the callers of this
// process that waited on one lease read it once, not once each. It
// records each key's answer in got, and returns the keys to take again:
// those Redis does not hold.
func (l *loads[K, V]) readLanded(ctx context.Context, first map[K]pending[K, V], ks []K, got map[K]*V) ([]K, error) {
	type answer struct {
		v   *V
		err error
	}
	answers := make([]answer, len(ks))
	var wg sync.WaitGroup
	for i, k := range ks {
		wg.Go(func() {
			v, err := l.resolve(ctx, k, first[k].e, missed{})
			answers[i] = answer{v, err}
		})
	}
	wg.Wait()
	var again []K
	for i, k := range ks {
		switch err := answers[i].err; {
		case err == nil:
			got[k] = answers[i].v
		case needsLoad(err):
			again = append(again, k)
		case cachedAbsence(err): // a placeholder of an absent row
			got[k] = nil
		default:
			return nil, err
		}
	}
	return again, nil
}

// loadLeased calls the batch loader for the keys of ks at taken, whose
// leases (leases, aligned with ks) this process took, writes their rows
// back under them in one round trip, releases the leases of the rest, and
// records each key's answer in got: its row, written back or not (a
// lease lost to a write or a delete: the caller began before it, as in
// leased).
func (l *loads[K, V]) loadLeased(ctx context.Context, first map[K]pending[K, V], ks []K, taken []int, leases []lease.Lease, got map[K]*V) error {
	load := make([]K, len(taken))
	for j, i := range taken {
		load[j] = ks[i]
	}
	rows, err := l.batchLoad(ctx, load)
	if err != nil {
		pipe := l.rdb.Pipeline()
		for _, i := range taken {
			leases[i].Release(ctx, pipe, lease.Dropped)
		}
		pipe.Exec(ctx) // a failed release: its waiters wait the lease out
		return err
	}
	var ws []*write[K, V]
	release := l.rdb.Pipeline()
	for _, i := range taken {
		k := ks[i]
		v := rows[k]
		got[k] = v
		if w := l.backOf(first[k], v, &leases[i], nil); w != nil {
			ws = append(ws, w)
			continue
		}
		outcome := lease.Dropped
		if v == nil {
			outcome = lease.Absent
		}
		leases[i].Release(ctx, release, outcome)
	}
	if release.Len() > 0 {
		release.Exec(ctx)
	}
	errs, refused := l.writes.commit(ctx, ws, nil)
	if err := errors.Join(append(errs, refused)...); err != nil && ctx.Err() == nil {
		l.log.Warn("hotkey: write-back failed", "keys", len(ws), "err", err)
	}
	return nil
}

// batchLoad calls the batch loader for ks.
func (l *loads[K, V]) batchLoad(ctx context.Context, ks []K) (map[K]*V, error) {
	l.count.loads.Add(1)
	rows, err := l.loadBatch(ctx, ks)
	if err != nil {
		l.count.loadErrors.Add(1)
		return nil, &opError{Op: fmt.Sprintf("load %d keys", len(ks)), Err: err} // the user's error, kept whole
	}
	return rows, nil
}

// rows reads the rows of ks through the batch loader, or the loader id by
// id; an absent row is nil in the result.
func (l *loads[K, V]) rows(ctx context.Context, ks []K) (map[K]*V, error) {
	l.count.loads.Add(1)
	if l.batch != nil {
		rows, err := group.Unattended(ctx, func() (map[K]*V, error) { return l.loadBatch(ctx, ks) })
		if errors.Is(err, group.ErrAbandoned) {
			return nil, err
		}
		if err != nil {
			l.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load: %w", err)
		}
		return rows, nil
	}
	rows := make(map[K]*V, len(ks))
	for _, k := range ks {
		v, err := group.Unattended(ctx, func() (*V, error) { return l.loadOne(ctx, k) })
		switch {
		case errors.Is(err, group.ErrAbandoned):
			return nil, err
		case errors.Is(err, ErrNotFound):
		case err != nil:
			l.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load %q: %w", l.key(k), err)
		default:
			rows[k] = v
		}
	}
	return rows, nil
}

// loadOne calls the loader for k, and loadBatch the batch loader for ks,
// each a load the Cache's Recorder is told of.
func (l *loads[K, V]) loadOne(ctx context.Context, k K) (*V, error) {
	return loaded(ctx, l.obs, func(ctx context.Context) (*V, error) { return l.one(ctx, k) })
}

func (l *loads[K, V]) loadBatch(ctx context.Context, ks []K) (map[K]*V, error) {
	return loaded(ctx, l.obs, func(ctx context.Context) (map[K]*V, error) { return l.batch(ctx, ks) })
}
