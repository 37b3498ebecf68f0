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
type hotEntry struct {
	key   string
	since time.Time
	gen   atomic.Uint64 // bumped under mu by every write, delete and demotion

	mu         sync.Mutex
	dead       bool // demoted: nothing may be stored for it any more
	registered bool // holds a local copy that refresh reloads
	failures   int  // consecutive refresh failures
}

// hotSet is an immutable set of hot keys, swapped whole on every change so
// the read path looks it up without a lock.
type hotSet struct {
	m map[string]*hotEntry
}

var emptyHotSet = &hotSet{m: map[string]*hotEntry{}}

// detector owns the recorder and the hot set: it decides which keys are
// hot and applies those decisions in order.
type detector struct {
	rec   *Recorder
	th    Thresholds
	clock Clock
	log   *slog.Logger
	// drop removes a key's local value; it runs under the entry's mutex.
	drop func(key string)

	hot atomic.Pointer[hotSet]
	mu  sync.Mutex // serialises changes of hot

	promotions atomic.Uint64
	demotions  atomic.Uint64
}

func newDetector(cfg Config, drop func(string)) *detector {
	d := &detector{
		rec:   NewRecorder(cfg, cfg.Clock.Now()),
		th:    Thresholds{Hot: cfg.HotQPS, Warm: cfg.WarmQPS, TopN: cfg.TopN},
		clock: cfg.Clock,
		log:   cfg.Logger,
		drop:  drop,
	}
	d.hot.Store(emptyHotSet)
	return d
}

// observe records one access and promotes key at once if the access made
// it burst past the hot rate: a key at ten times hot_qps is served locally
// within a fraction of a slot, not at the next tick.
func (d *detector) observe(key string) {
	if d.rec.Record(key) {
		d.promoteInline(key)
	}
}

// lookup returns key's entry when key is hot.
func (d *detector) lookup(key string) *hotEntry { return d.hot.Load().m[key] }

func (d *detector) promoteInline(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.hot.Load()
	if cur.m[key] != nil {
		return
	}
	view := make([]KeyRate, 0, len(cur.m)+1)
	for k := range cur.m {
		view = append(view, d.rec.Rate(k))
	}
	view = append(view, d.rec.Rate(key))
	d.applyLocked(Select(view, hotKeys(cur), d.th, PromotePass), view)
}

// reselect runs the selector over every key the recorder tracks. The scan
// runs before taking the lock, so an inline promotion on the read path
// never waits for it.
func (d *detector) reselect(pass Pass) {
	view := d.rec.Rates(min(d.th.Warm, d.th.Hot))
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.hot.Load()
	seen := make(map[string]bool, len(view))
	for _, kr := range view {
		seen[kr.Key] = true
	}
	for k := range cur.m {
		if !seen[k] {
			view = append(view, d.rec.Rate(k))
		}
	}
	d.applyLocked(Select(view, hotKeys(cur), d.th, pass), view)
}

func hotKeys(s *hotSet) map[string]bool {
	m := make(map[string]bool, len(s.m))
	for k := range s.m {
		m[k] = true
	}
	return m
}

// applyLocked publishes the new hot set, then cleans up after each demoted
// key: its local value, registration and failure count go, in that order.
func (d *detector) applyLocked(dec Decision, view []KeyRate) {
	if len(dec.Promote) == 0 && len(dec.Demote) == 0 {
		return
	}
	score := make(map[string]float64, len(view))
	for _, kr := range view {
		score[kr.Key] = kr.Score()
	}
	cur := d.hot.Load()
	next := &hotSet{m: maps.Clone(cur.m)}
	now := d.clock.Now()
	var demoted []*hotEntry
	for _, k := range dec.Demote {
		if e := next.m[k]; e != nil {
			demoted = append(demoted, e)
			delete(next.m, k)
		}
	}
	for _, k := range dec.Promote {
		next.m[k] = &hotEntry{key: k, since: now}
	}
	d.hot.Store(next)

	for _, e := range demoted {
		e.mu.Lock()
		e.dead = true
		e.gen.Add(1)
		d.drop(e.key)
		e.registered = false
		e.failures = 0
		e.mu.Unlock()
		d.demotions.Add(1)
		d.log.Info("hotkey: demoted", "key", e.key, "qps", score[e.key], "hot_for", now.Sub(e.since))
	}
	for _, k := range dec.Promote {
		d.promotions.Add(1)
		d.log.Info("hotkey: promoted", "key", k, "qps", score[k])
	}
}
