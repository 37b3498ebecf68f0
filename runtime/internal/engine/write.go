package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/keyver"
	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/throttle"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// This file holds the one path of every write to Redis: Set, Del, the
// change buffer's sync, a collection's HSet and HDel, and the write-backs
// of what a loader or a batch loader returned. Each write, of one key or
// of a batch, takes these steps in this order:
//
//  1. Each value is encoded and its size checked (encoded): one above
//     max_value_bytes_hard is refused, and nothing is sent for it.
//  2. Each key's token is taken before anything is sent (a write-back
//     carries its read's). A key whose node cannot be reached refuses
//     the whole write: nothing is sent (commit).
//  3. Every key's command is sent in one round trip: one pipeline, or a
//     collection's scripts (send).
//  4. Each key is settled (settle): a command that failed is counted once
//     and told to its node's breaker, and when it may have landed its
//     key's copy is made unverified (uncertain); a write that landed is
//     applied to the local copy; one that did not land (a write-back's
//     SET NX finding a value) changes nothing. Then what went with the
//     command (the Bloom filter's addition) is checked.
//  5. The landed keys are announced, in one round trip (announce); a
//     failed announcement fails the writes it announced, though they
//     landed.
//
// What it keeps: no read begun before a write can store or share what it
// read once the write is applied or its outcome unknown (applying and
// uncertain both move the key's generation on), and a landed write is
// announced once this process's copy holds it, and acknowledged only once
// announced.

// write is one key's part of a write.
type write[K comparable, V any] struct {
	k   K
	key string
	// t is the key's token, taken before anything was sent; a write-back
	// is given its read's, by which its load is judged.
	t fresh.Token
	// queue adds the key's commands to p (a pipeline, or the client
	// itself for a lone command) and sets result and after; nil for a
	// write whose send queues it otherwise (a collection's).
	queue func(ctx context.Context, p redis.Cmdable)
	// cmd is the key's command, which landed when it did not fail; result,
	// when set, reports instead whether it landed (a write-back's SET NX
	// may not), and its error. after, when not nil, is the error of what
	// went with it (the Bloom filter's addition).
	cmd    redis.Cmder
	result func() (landed bool, err error)
	after  func() error
	// land applies the landed write to the key's local copy, under t.
	land func(t fresh.Token)
	// also are keys the write deletes beside its own (the neighbouring
	// versions' rows: beside), announced with it.
	also []string
}

// writer takes a Cache's writes down the path above: the Cache's own,
// its collection's, its sync worker's and its loads' write-backs.
type writer[K comparable, V any] struct {
	rdb    redis.UniversalClient
	layout layout.Layout       // how each value sits in Redis
	copies *fresh.Copies[K, V] // which each landed write is applied to
	key    func(K) string
	codec  *codec[V]
	sizes  *sizes
	bloom  *bloom.Filter // nil unless bloom=on
	count  *counters
	hub    *track.Hub // which says whether writes are announced
	// prefix and version place the entity's keys, and the neighbouring
	// versions' (neighbours).
	prefix  string
	version int
	// ttl, nullTTL and jitter are the expiries of a write (see ttl).
	ttlOf, nullTTL time.Duration
	jitter         float64
	now            func() time.Time
	log            *slog.Logger
	// loader is set when the Cache has a loader: only then are the
	// neighbouring versions' rows deleted. leases is set when a write-back
	// holds its key's lease (rebuild_lock), and lease says how they are kept.
	loader, leases bool
	lease          lease.Keys
	// publishLog spaces the lines about failed announcements, foreignLog
	// those about values of another shape (drop).
	publishLog, foreignLog throttle.Lines
}

// encoded encodes v, to be written at key, and checks its size (sized).
func (wr *writer[K, V]) encoded(key string, v *V) ([]byte, error) {
	return sized(wr.sizes, wr.codec, key, v)
}

// sized encodes v with cd, to be written at key, and checks its size
// against s: the one size check of every write, of a value or of a
// collection's item (HSet).
func sized[T any](s *sizes, cd *codec[T], key string, v *T) ([]byte, error) {
	b, err := cd.encode(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if err := s.check("write", key, len(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// commit writes ws: it takes the tokens of those that have none, refuses
// the whole write when a key's node cannot be reached (refused), sends
// every key's command in one round trip (send, or one pipeline of each
// write's queue when send is nil) and settles each key. errs holds each
// key's error.
func (wr *writer[K, V]) commit(ctx context.Context, ws []*write[K, V], send func(ctx context.Context)) (errs []error, refused error) {
	for _, w := range ws {
		if w.t.N == nil {
			w.t = wr.copies.Begin(w.key)
		}
		if w.t.N.Down(ctx) {
			return nil, wr.count.refuse(w.t.N)
		}
	}
	switch {
	case send != nil:
		send(ctx)
	case len(ws) == 1 && wr.bloom == nil && len(ws[0].also) == 0:
		ws[0].queue(ctx, wr.rdb) // one command: no pipeline to build
	default:
		p := wr.rdb.Pipeline()
		for _, w := range ws {
			w.queue(ctx, p)
		}
		_, _ = p.Exec(ctx) // each command's own error is settled
	}
	errs = make([]error, len(ws))
	announces := wr.hub.Announces()
	var landed []int
	for i, w := range ws {
		var ok bool
		if ok, errs[i] = wr.settle(ctx, w); ok && announces {
			landed = append(landed, i)
		}
	}
	keys := make([]string, len(landed))
	var also [][]string
	for j, i := range landed {
		keys[j] = ws[i].key
		if len(ws[i].also) > 0 {
			also = append(also, ws[i].also)
		}
	}
	if err := errors.Join(wr.announce(ctx, keys...), wr.announceAlso(ctx, also)); err != nil {
		for _, i := range landed {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs, nil
}

// addTo queues the addition of key to the Bloom filter on p, which
// commit makes a pipeline whenever there is a filter; nil without one.
func (wr *writer[K, V]) addTo(ctx context.Context, p redis.Cmdable, key string) bloom.Op {
	pipe, ok := p.(redis.Pipeliner)
	if !ok {
		return nil
	}
	return wr.bloom.AddTo(ctx, pipe, key)
}

// one commits the write of one key, for the caller's op.
func (wr *writer[K, V]) one(ctx context.Context, op string, w *write[K, V]) error {
	errs, refused := wr.commit(ctx, []*write[K, V]{w}, nil)
	if refused == nil {
		refused = errs[0]
	}
	if refused != nil {
		return opErr(op, w.key, refused)
	}
	return nil
}

// settle applies the outcome of w's command (step 4 above), and reports
// whether it landed.
func (wr *writer[K, V]) settle(ctx context.Context, w *write[K, V]) (landed bool, err error) {
	if w.result != nil {
		landed, err = w.result()
	} else {
		err = w.cmd.Err()
		landed = err == nil
	}
	if err != nil {
		wr.count.redisError(ctx, err)
		w.t.N.Failed(ctx, err)
		if !breaker.NotSent(err) {
			wr.copies.Uncertain(w.k, w.key) // the write may have landed
		}
		return false, err
	}
	if landed {
		w.land(w.t)
	}
	if w.after != nil {
		err = w.after()
	}
	return landed, err
}

// set is the write of v (encoded b) at k's key with the entity's
// TTL, as Set and the change buffer's sync write a row: a plain SET, and
// in the same round trip the key's addition to the Bloom filter, which
// fails the write when it fails (the id could read as absent later), and
// the deletion of the row under the neighbouring versions (beside).
func (wr *writer[K, V]) set(k K, key string, v *V, b []byte) *write[K, V] {
	w := &write[K, V]{k: k, key: key, also: wr.neighbours(key)}
	w.queue = func(ctx context.Context, p redis.Cmdable) {
		ttl := wr.ttl(false)
		exp := layout.WroteExpiry(wr.now(), ttl) // before it is sent
		w.cmd = wr.layout.Set(ctx, p, key, b, ttl)
		var added func() error
		if add := wr.addTo(ctx, p, key); add != nil {
			added = func() error {
				if err := wr.bloom.Added(add); err != nil {
					return fmt.Errorf("add to the Bloom filter: %w", err)
				}
				return nil
			}
		}
		w.after = joinChecks(added, wr.beside(ctx, p, w))
		w.land = func(t fresh.Token) { wr.copies.Wrote(k, key, t, v, len(b), exp) }
	}
	return w
}

// del is the write that deletes k's key, and its row under the
// neighbouring versions (beside).
func (wr *writer[K, V]) del(k K, key string) *write[K, V] {
	w := &write[K, V]{k: k, key: key, also: wr.neighbours(key)}
	w.queue = func(ctx context.Context, p redis.Cmdable) {
		w.cmd = wr.layout.Del(ctx, p, key)
		w.after = wr.beside(ctx, p, w)
		w.land = func(t fresh.Token) { wr.copies.Wrote(k, key, t, nil, 0, 0) }
	}
	return w
}

// neighbours are the keys of key's row under the versions one below and
// one above this build's (keyver.Neighbours), for a Cache with a loader:
// deleted, the row is read again from the source of truth. A Cache
// without one keeps its values only in Redis, and deletes none of another
// version's: they would be lost.
func (wr *writer[K, V]) neighbours(key string) []string {
	if !wr.loader {
		return nil
	}
	return keyver.Neighbours(wr.prefix, wr.version, key)
}

// beside queues on p, with w, the deletion of w's row under the
// neighbouring versions (w.also), one DEL a key (on a cluster they are in
// other slots), announced with it. During a rolling deploy that changes
// version=, a build of the other version then reads the row from its
// loader, the source of truth, once this write is acknowledged, instead
// of its own copy until the TTL. It returns the check of the deletions:
// one that failed fails the write, which landed.
func (wr *writer[K, V]) beside(ctx context.Context, p redis.Cmdable, w *write[K, V]) func() error {
	keys := w.also
	if len(keys) == 0 {
		return nil
	}
	cmds := make([]*redis.IntCmd, len(keys))
	for i, key := range keys {
		cmds[i] = p.Del(ctx, key)
	}
	return func() error {
		for i, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				return fmt.Errorf("delete the row of the neighbouring version at %s: %w", operr.Short(keys[i]), err)
			}
		}
		return nil
	}
}

// joinChecks returns a check that runs each of checks (nil ones skipped)
// and returns the first error, nil when there is no check.
func joinChecks(checks ...func() error) func() error {
	checks = slices.DeleteFunc(checks, func(f func() error) bool { return f == nil })
	if len(checks) == 0 {
		return nil
	}
	return func() error {
		for _, f := range checks {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
}

// back is the write-back of what a loader returned for k (v, encoded
// b; a nil v writes the absent row's placeholder for null_ttl), read
// under t: SET NX, so that a value a writer stored while the loader ran
// is never overwritten by an older row, with a row's key added to the
// Bloom filter in the same round trip. A hot key's entry e keeps v
// locally once the write-back lands: one refused by SET NX means a
// writer stored something newer. Under ls, a lease this process holds,
// it is written instead only while the key holds the lease, which a write
// or a delete since removed (runtime/internal/lease). kept, when not nil,
// learns whether it landed, and the expiry of a copy of what it wrote.
func (wr *writer[K, V]) back(k K, key string, t fresh.Token, e *fresh.Entry[K], v *V, b []byte, kept func(exp int64), ls *lease.Lease) *write[K, V] {
	w := &write[K, V]{k: k, key: key, t: t}
	w.queue = func(ctx context.Context, p redis.Cmdable) {
		ttl := wr.ttl(v == nil)
		var done layout.Written
		var exp int64
		if ls != nil {
			done, exp = wr.layout.Fill(ctx, p, key, b, ttl, ls)
		} else {
			done, exp = wr.layout.SetNX(ctx, p, key, b, ttl)
		}
		if v != nil {
			add := wr.addTo(ctx, p, key)
			w.after = func() error {
				if err := wr.bloom.Added(add); err != nil { // the read returns the row either way
					wr.log.Warn("hotkey: adding a loaded id to the Bloom filter failed", "key", operr.Short(key), "err", err)
				}
				return nil
			}
		}
		w.result = done
		w.land = func(t fresh.Token) {
			if e != nil {
				wr.copies.Keep(e, t, v, 0, len(b), exp)
			}
			if kept != nil {
				kept(exp)
			}
		}
	}
	return w
}

// seize takes the keys of ks for a sync of the change buffer before their
// rows are read: each key's lease (runtime/internal/lease), replacing
// what the key holds, through the write path (its copies dropped and the
// write announced, as a delete's are). So a write or a delete that
// follows a later update of the database, by any client, takes the key
// from the lease, and the row read now is never written after it, as a
// load's lease makes it win (load.go); and reads of the keys meanwhile
// wait for the sync's rows rather than load them. It returns the write of
// the rows read after it (synced), and release, which gives the keys up.
// Without leases (rebuild_lock=off) nothing is taken, and the rows are
// written with a plain SET.
func (wr *writer[K, V]) seize(ctx context.Context, ks []K) (fill func(context.Context, map[K]*V) error, release func(context.Context), err error) {
	if !wr.leases {
		return func(ctx context.Context, rows map[K]*V) error { return wr.synced(ctx, ks, rows, nil) }, func(context.Context) {}, nil
	}
	leases := make([]lease.Lease, len(ks))
	ws := make([]*write[K, V], len(ks))
	for i, k := range ks {
		key := wr.key(k)
		leases[i] = wr.lease.New(key)
		ws[i] = wr.take(k, key, leases[i])
	}
	release = func(ctx context.Context) {
		pipe := wr.rdb.Pipeline()
		for _, ls := range leases {
			ls.Release(ctx, pipe, lease.Dropped)
		}
		pipe.Exec(ctx) // failed: the placeholders expire
	}
	errs, refused := wr.commit(ctx, ws, nil)
	if err := errors.Join(append(errs, refused)...); err != nil {
		release(ctx)
		return nil, nil, fmt.Errorf("take the keys: %w", err)
	}
	return func(ctx context.Context, rows map[K]*V) error { return wr.synced(ctx, ks, rows, leases) }, release, nil
}

// take is the write of ls's placeholder at k's key, whatever it holds, for
// the lease's TTL: the key's copy is dropped, as by a delete.
func (wr *writer[K, V]) take(k K, key string, ls lease.Lease) *write[K, V] {
	w := &write[K, V]{k: k, key: key}
	w.queue = func(ctx context.Context, p redis.Cmdable) {
		w.cmd = p.Set(ctx, key, ls.Placeholder(), wr.lease.TTL)
		w.land = func(t fresh.Token) { wr.copies.Wrote(k, key, t, nil, 0, 0) }
	}
	return w
}

// synced writes a synced batch to Redis in one pipeline, as Set and
// Del would key by key: each row of ks found in rows is written with the
// entity's TTL, and the key of each row that is gone is deleted, under
// leases (aligned with ks; see seize) when not nil: a row lands only
// where the key still holds its lease, and a gone row's lease is released
// (its key is then absent). Without leases, a plain SET: a change racing
// this write marks the id again, which syncs it again. Every instance's
// local copy follows through invalidation, this one's at once, as after
// Set. A row too large to store is deleted instead, so Redis never keeps
// the stale one.
func (wr *writer[K, V]) synced(ctx context.Context, ks []K, rows map[K]*V, leases []lease.Lease) error {
	ws := make([]*write[K, V], 0, len(ks))
	release := wr.rdb.Pipeline()
	for i, k := range ks {
		key, v := wr.key(k), rows[k]
		var b []byte
		var err error
		if v != nil {
			b, err = wr.encoded(key, v)
		}
		if errors.Is(err, ErrValueTooLarge) {
			wr.log.Warn("hotkey: synced row too large to store; its key is deleted instead", "key", operr.Short(key), "err", err)
			v, err = nil, nil
		}
		switch {
		case err != nil:
			return fmt.Errorf("%q: %w", key, err)
		case v == nil && leases != nil:
			leases[i].Release(ctx, release, lease.Absent)
		case v == nil:
			ws = append(ws, wr.del(k, key))
		case leases != nil:
			ws = append(ws, wr.back(k, key, fresh.Token{}, nil, v, b, nil, &leases[i]))
		default:
			ws = append(ws, wr.set(k, key, v, b))
		}
	}
	if release.Len() > 0 {
		if _, err := release.Exec(ctx); err != nil {
			return fmt.Errorf("delete the keys of gone rows: %w", err)
		}
	}
	errs, refused := wr.commit(ctx, ws, nil)
	if refused != nil {
		return fmt.Errorf("write: %w", refused)
	}
	for i, err := range errs {
		if err != nil {
			errs[i] = fmt.Errorf("write %q: %w", ws[i].key, err)
		}
	}
	return errors.Join(errs...)
}

// backOne writes back through the write path (back), under ls when
// not nil, what the loader returned for k, and reports whether it landed, and the expiry
// of a copy of what it wrote. A failed write-back costs the next reader
// a load, nothing more: it is counted and logged, not returned. The
// load's own token keeps its copy (the flight's), so none is given here.
func (wr *writer[K, V]) backOne(ctx context.Context, k K, key string, v *V, b []byte, ls *lease.Lease) (landed bool, exp int64) {
	w := wr.back(k, key, fresh.Token{}, nil, v, b, func(e int64) { landed, exp = true, e }, ls)
	errs, refused := wr.commit(ctx, []*write[K, V]{w}, nil)
	if refused == nil && errs[0] != nil && ctx.Err() == nil { // a refused one was not sent
		wr.log.Warn("hotkey: write-back failed", "key", operr.Short(key), "err", errs[0])
	}
	return landed, exp
}

// drop deletes k's key, whose bytes do not decode (err), so that the
// loader's row replaces them, as go-zero does. It changes no copy (the
// bytes never made one) and returns nothing: the read goes on to the
// loader either way, and a failed delete is counted.
//
// Bytes that are a whole msgpack map of another shape (foreignValue) are
// another build's, not garbage: they are left in place, and the loader's
// write-back (SET NX) does not overwrite them either. Deleting them would
// have the two builds of a deploy take turns deleting each other's values,
// each read of either going to the database. It is logged at most once a
// second (foreignLog).
func (wr *writer[K, V]) drop(ctx context.Context, k K, key string, err error) {
	if errors.As(err, new(foreignValue)) {
		if unlogged, ok := wr.foreignLog.Allow(wr.now(), publishLogEvery); ok {
			wr.log.Warn("hotkey: a value of another shape under the entity's key; loading the row for the read and leaving the value to the build that wrote it: give the changed struct a new version= (docs/changing-structs.md)", "key", operr.Short(key), "version", wr.version, "err", err, "unlogged", unlogged)
		}
		return
	}
	wr.log.Warn("hotkey: deleting a value that does not decode, to reload it", "key", operr.Short(key), "err", err)
	w := &write[K, V]{k: k, key: key, land: func(fresh.Token) {}}
	w.queue = func(ctx context.Context, p redis.Cmdable) {
		w.cmd = wr.layout.Del(ctx, p, key)
	}
	wr.commit(ctx, []*write[K, V]{w}, nil)
}

// publishLogEvery spaces the lines about failed announcements: while
// PUBLISH fails, every write's does.
const publishLogEvery = time.Second

// announce publishes the writes of keys for config.InvalidatePubSub and
// InvalidatePubSubKeys, each on the entity's channel and the key's, in
// one round trip; on a cluster, a key's goes to the key's master, whose
// subscribers hear it before any PING read after. A failed publish fails
// the writes it announced (errUnannounced): they landed, but the other
// instances' copies of their keys may stay older than them until refresh,
// so none is acknowledged, and its caller writes again. It is counted and
// logged, the first and then at most one a second (publishLogEvery).
func (wr *writer[K, V]) announce(ctx context.Context, keys ...string) error {
	return wr.announceOn(ctx, wr.prefix, keys)
}

// announceOn is announce on the channel of prefix, an entity's.
func (wr *writer[K, V]) announceOn(ctx context.Context, prefix string, keys []string) error {
	if len(keys) == 0 || !wr.hub.Announces() {
		return nil
	}
	err := track.Announce(ctx, wr.rdb, prefix, keys)
	if err == nil {
		return nil
	}
	if wr.count.redisError(ctx, err) {
		if unlogged, ok := wr.publishLog.Allow(wr.now(), publishLogEvery); ok {
			wr.log.Warn("hotkey: publishing an invalidation failed; the writes it announced fail, though they landed", "key", operr.Short(keys[0]), "keys", len(keys), "err", err, "unlogged_failures", unlogged)
		}
	}
	return errUnannounced{err}
}

// announceAlso announces the neighbouring versions' rows the writes
// deleted (each write's also, in the order of keyver.Neighbours) on
// their versions' channels, to which the builds of those versions listen.
func (wr *writer[K, V]) announceAlso(ctx context.Context, also [][]string) error {
	if len(also) == 0 {
		return nil
	}
	var errs []error
	for j, prefix := range keyver.NeighbourPrefixes(wr.prefix, wr.version) {
		keys := make([]string, len(also))
		for i, ks := range also {
			keys[i] = ks[j]
		}
		errs = append(errs, wr.announceOn(ctx, prefix, keys))
	}
	return errors.Join(errs...)
}

// errUnannounced fails a write that landed but whose announcement did
// not: acknowledged, it would let the other instances serve older copies
// of its key for longer than the bound.
type errUnannounced struct{ err error }

func (e errUnannounced) Error() string {
	return "the value landed, but telling the other instances failed (" + e.err.Error() + "): write it again, or their copies of the key stay older until refresh"
}

func (e errUnannounced) Unwrap() error { return e.err }

// jitter returns the expiry of a write: base spread uniformly
// within ±j (the Jitter option), in whole milliseconds as Redis keeps them.
func jitter(base time.Duration, j float64) time.Duration {
	if base <= 0 || j == 0 {
		return base
	}
	f := 1 + j*(2*rand.Float64()-1)
	return max(time.Millisecond, time.Duration(float64(base)*f).Truncate(time.Millisecond))
}

// ttl is the expiry of a write: the entity's TTL, or NullTTL for the
// placeholder of an absent row (null), spread by Jitter.
func (wr *writer[K, V]) ttl(null bool) time.Duration {
	if null {
		return jitter(wr.nullTTL, wr.jitter)
	}
	return jitter(wr.ttlOf, wr.jitter)
}
