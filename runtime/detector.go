package runtime

import (
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"
)

// hotEntry is the runtime's record of one hot key. Its mutex orders every
// change of the key's local copy: a store lands only if no write, delete or
// demotion happened since the value was read from Redis (gen unchanged),
// so a slow reader can never put back a value older than a newer write.
type hotEntry[K comparable] struct {
	k     K
	key   string // the Redis key
	since time.Time
	gen   atomic.Uint64 // bumped under mu by every write, delete and demotion

	mu         sync.Mutex
	dead       bool // demoted: nothing may be stored for it any more
	registered bool // holds a local copy that refresh reloads
	failures   int  // consecutive refresh failures
	// stale is set while the last refresh failed; the copy is still served
	// (stale-while-error) until RefreshFailures is reached.
	stale atomic.Bool
}

// hotSet is an immutable set of hot keys, swapped whole on every change so
// the read path looks it up without a lock.
type hotSet[K comparable] struct {
	m      map[K]*hotEntry[K]
	byName map[string]*hotEntry[K] // by Redis key, for invalidations
}

func newHotSet[K comparable](m map[K]*hotEntry[K]) *hotSet[K] {
	s := &hotSet[K]{m: m, byName: make(map[string]*hotEntry[K], len(m))}
	for _, e := range m {
		s.byName[e.key] = e
	}
	return s
}

// detector owns the recorder and the hot set: it decides which keys are
// hot and applies those decisions in order.
type detector[K comparable] struct {
	rec   *Recorder[K]
	th    Thresholds
	clock Clock
	log   *slog.Logger
	// drop removes a key's local value; it runs under the entry's mutex.
	drop func(K)

	hot atomic.Pointer[hotSet[K]]
	mu  sync.Mutex // serialises changes of hot

	promotions atomic.Uint64
	demotions  atomic.Uint64
	// stale counts hot keys whose last refresh failed, so the read path
	// looks for one only while there is any.
	stale atomic.Int32
}

func newDetector[K comparable](cfg Config, name func(K) string, drop func(K)) *detector[K] {
	d := &detector[K]{
		rec:   NewRecorder(cfg, cfg.Clock.Now(), name),
		th:    Thresholds{Hot: cfg.HotQPS, Warm: cfg.WarmQPS, TopN: cfg.TopN},
		clock: cfg.Clock,
		log:   cfg.Logger,
		drop:  drop,
	}
	d.hot.Store(newHotSet(map[K]*hotEntry[K]{}))
	return d
}

// observe records one access and promotes key at once if the access made
// it burst past the hot rate: a key at ten times hot_qps is served locally
// within a fraction of a slot, not at the next tick.
func (d *detector[K]) observe(key K) {
	if d.rec.Record(key) {
		d.promoteInline(key)
	}
}

// lookup returns key's entry when key is hot.
func (d *detector[K]) lookup(key K) *hotEntry[K] { return d.hot.Load().m[key] }

func (d *detector[K]) promoteInline(key K) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.hot.Load()
	if cur.m[key] != nil {
		return
	}
	view := make([]KeyRate[K], 0, len(cur.m)+1)
	for k := range cur.m {
		view = append(view, d.rec.Rate(k))
	}
	view = append(view, d.rec.Rate(key))
	d.applyLocked(Select(view, names(cur), d.th, PromotePass), view)
}

// reselect runs the selector over every key the recorder tracks. The scan
// runs before taking the lock, so an inline promotion on the read path
// never waits for it.
func (d *detector[K]) reselect(pass Pass) {
	view := d.rec.Rates(min(d.th.Warm, d.th.Hot))
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.hot.Load()
	seen := make(map[K]bool, len(view))
	for _, kr := range view {
		seen[kr.Key] = true
	}
	for k := range cur.m {
		if !seen[k] {
			view = append(view, d.rec.Rate(k))
		}
	}
	d.applyLocked(Select(view, names(cur), d.th, pass), view)
}

// names maps the hot keys to their Redis keys, as Select takes them.
func names[K comparable](s *hotSet[K]) map[K]string {
	m := make(map[K]string, len(s.m))
	for k, e := range s.m {
		m[k] = e.key
	}
	return m
}

// applyLocked publishes the new hot set, then cleans up after each demoted
// key: its local value, registration and failure count go, in that order.
func (d *detector[K]) applyLocked(dec Decision[K], view []KeyRate[K]) {
	if len(dec.Promote) == 0 && len(dec.Demote) == 0 {
		return
	}
	rates := make(map[K]KeyRate[K], len(view))
	for _, kr := range view {
		rates[kr.Key] = kr
	}
	cur := d.hot.Load()
	m := maps.Clone(cur.m)
	now := d.clock.Now()
	var demoted []*hotEntry[K]
	for _, k := range dec.Demote {
		if e := m[k]; e != nil {
			demoted = append(demoted, e)
			delete(m, k)
		}
	}
	for _, k := range dec.Promote {
		m[k] = &hotEntry[K]{k: k, key: rates[k].Name, since: now}
	}
	d.hot.Store(newHotSet(m))

	for _, e := range demoted {
		e.mu.Lock()
		e.dead = true
		d.forgetLocked(e)
		e.mu.Unlock()
		d.demotions.Add(1)
		d.log.Info("hotkey: demoted", "key", e.key, "qps", rates[e.k].Score(), "hot_for", now.Sub(e.since))
	}
	for _, k := range dec.Promote {
		d.promotions.Add(1)
		d.log.Info("hotkey: promoted", "key", rates[k].Name, "qps", rates[k].Score())
	}
}

// forgetLocked drops the local copy, the refresh registration and the
// failure count, and bumps the generation so no read in flight stores its
// value afterwards. The caller holds e.mu.
func (d *detector[K]) forgetLocked(e *hotEntry[K]) {
	e.gen.Add(1)
	d.drop(e.k)
	e.registered = false
	d.setFailuresLocked(e, 0)
}

// setFailuresLocked records e's consecutive refresh failures and whether
// its copy is therefore stale. The caller holds e.mu.
func (d *detector[K]) setFailuresLocked(e *hotEntry[K], n int) {
	e.failures = n
	if stale := n > 0; e.stale.Swap(stale) != stale {
		if stale {
			d.stale.Add(1)
		} else {
			d.stale.Add(-1)
		}
	}
}

// staleRead reports whether a local hit of k serves a copy whose last
// refresh failed.
func (d *detector[K]) staleRead(k K) bool {
	if d.stale.Load() == 0 {
		return false
	}
	e := d.lookup(k)
	return e != nil && e.stale.Load()
}
