package engine

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/reads"
	"github.com/hotkeygen/hotkeygen/runtime/internal/throttle"
)

// refresher reloads a Cache's hot copies from Redis: every one, now and
// then (run), and those a session starting or a slot moving left
// unverified (reload). It is given what it uses, by New.
type refresher[K comparable, V any] struct {
	det    *fresh.Detector[K]  // whose hot set says which keys to reload
	copies *fresh.Copies[K, V] // which each answer is applied to
	reader *reads.Reader       // which reads the keys
	g      *group.Group        // which a patient reload's reads run on
	decode func(key string, b []byte) (*V, error)
	count  *atomic.Uint64  // Stats.Refreshes
	done   context.Context // ended by Close
	now    func() time.Time
	log    *slog.Logger
	// lines spaces the lines about failed refreshes.
	lines throttle.Lines
}

// run reloads every registered hot key (see reload): the one
// freshness mechanism of invalidate=off, and a backstop for the others.
//
// It waits for a slow node, open breaker or not, as a read of an
// overtaken copy does. A node answering later than AnswerWithin fails the
// breaker's pings yet acknowledges writes; with invalidation off nothing
// else tells the copies of them, so a refresh that gave up with the
// breaker would leave them unverified, served as stale reads until
// RefreshFailures refreshes had failed (TestARefreshWaitsForASlowNode).
// A node silent for refreshPatience fails it.
func (r *refresher[K, V]) run() {
	var es []*fresh.Entry[K]
	for _, e := range r.det.Set.Load().ByKey {
		if e.Refreshable() {
			es = append(es, e)
		}
	}
	r.logFailures(r.reload(r.done, es, true))
}

// refreshPatience is how long a refresh waits for its batch: a node that
// answers within breaker.SlowFor, the most a slow node takes, needs three
// answers to refresh through a new connection (HELLO, CLIENT SETINFO,
// then the batch).
const refreshPatience = 3 * breaker.SlowFor

// reload reads the keys of es with pipelined MGETs (see reads.Reader.Many), whose cost
// grows with round trips of hundreds of keys, not with keys, and applies
// each answer through the freshness protocol. A key missing from Redis is
// dropped locally; a key that fails RefreshFailures times in a row is
// dropped too, because its staleness is unknown. A patient reload waits
// for a slow node (reads.Reader.Patient).
func (r *refresher[K, V]) reload(ctx context.Context, es []*fresh.Entry[K], patient bool) refreshFailures {
	var failed refreshFailures
	if len(es) == 0 {
		return failed
	}
	keys := make([]string, len(es))
	ts := make([]fresh.Token, len(es))
	for i, e := range es {
		keys[i] = e.Key
		ts[i] = r.copies.Begin(e.Key)
	}
	var raw [][]byte
	var exps reads.Expiries
	var errs []error
	if patient {
		raw, exps, errs = r.reader.Patient(ctx, r.g, keys, refreshPatience)
	} else {
		raw, exps, errs = r.reader.Many(ctx, keys, nil) // each is kept
	}
	for i, e := range es {
		t := ts[i]
		if errs != nil && errs[i] != nil {
			failed.add(e.Key, r.copies.RefreshFailed(e), errs[i])
			continue
		}
		if raw[i] == nil {
			r.copies.DropIfUnchanged(e, t) // deleted
			r.count.Add(1)
			continue
		}
		sum := maphash.Bytes(rawSeed, raw[i]) | 1 // never 0, which means unknown
		if r.copies.Reverify(e, t, sum, exps.Of(i)) {
			r.count.Add(1)
			continue
		}
		v, err := r.decode(e.Key, raw[i])
		if errors.Is(err, ErrNotFound) {
			err, v = nil, nil // the placeholder of an absent row
		}
		if err != nil {
			failed.add(e.Key, r.copies.RefreshFailed(e), err)
			continue
		}
		r.count.Add(1)
		if r.copies.Keep(e, t, v, sum, len(raw[i]), exps.Of(i)) {
			e.Refreshed()
		}
	}
	return failed
}

// rawSeed seeds the hashes of refreshed values.
var rawSeed = maphash.MakeSeed()

// refreshFailures sums up the failures of one refresh, for one log line.
type refreshFailures struct {
	keys, dropped int
	key           string // the first key that failed, and its error
	err           error
}

func (f *refreshFailures) add(key string, dropped bool, err error) {
	if f.keys == 0 {
		f.key, f.err = key, err
	}
	f.keys++
	if dropped {
		f.dropped++
	}
}

// RefreshLogEvery spaces the lines about failed refreshes: with Redis down,
// every refresh of every hot key fails, and one line now and then says so.
const RefreshLogEvery = 10 * time.Second

// logFailures logs a refresh's failures, at most once per
// RefreshLogEvery, counting the refreshes whose failures went unlogged.
func (r *refresher[K, V]) logFailures(f refreshFailures) {
	if f.keys == 0 || r.done.Err() != nil { // failures of a closing Cache are no news
		return
	}
	if unlogged, ok := r.lines.Allow(r.now(), RefreshLogEvery); ok {
		r.log.Warn("hotkey: refresh failed", "keys", f.keys, "dropped", f.dropped, "key", operr.Short(f.key), "err", f.err,
			"unlogged_refreshes", unlogged)
	}
}
