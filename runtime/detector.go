package runtime

import (
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
)

// detector owns the recorder and the hot set: it decides which keys are
// hot and applies those decisions in order.
type detector[K comparable] struct {
	rec   *detect.Recorder[K]
	th    detect.Thresholds
	clock Clock
	log   *slog.Logger
	// demote marks a demoted key's entry dead and drops its local copy
	// and registration (freshness.go).
	demote func(*hotEntry[K])

	hot atomic.Pointer[hotSet[K]]
	mu  sync.Mutex // serialises changes of hot

	// cluster is the latest cluster-wide reading, nil until there is one:
	// the rates of the keys this instance reported, summed over every
	// replica. clusterScale (HotQPS/ClusterHotQPS) puts them on the scale
	// of the per-instance thresholds.
	cluster      atomic.Pointer[map[K]float64]
	clusterScale float64

	promotions atomic.Uint64
	demotions  atomic.Uint64
}

// detection is what of cfg the recorder depends on.
func (c Config) detection() detect.Params {
	return detect.Params{
		Window:        c.Window,
		HotQPS:        c.HotQPS,
		WarmQPS:       c.WarmQPS,
		RecorderSize:  c.RecorderSize,
		InactiveAfter: c.InactiveAfter,
		Aggregate:     c.Aggregate,
	}
}

func newDetector[K comparable](cfg Config, name func(K) string, demote func(*hotEntry[K])) *detector[K] {
	d := &detector[K]{
		rec:    detect.NewRecorder(cfg.detection(), cfg.Clock.Now(), name),
		th:     detect.Thresholds{Hot: cfg.HotQPS, Warm: cfg.WarmQPS, TopN: cfg.TopN},
		clock:  cfg.Clock,
		log:    cfg.Logger,
		demote: demote,

		clusterScale: cfg.HotQPS / cfg.clusterHotQPS(),
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

// seen records a read of key that went to Redis, and returns key's entry
// when key is hot (after the read, if it made key hot).
func (d *detector[K]) seen(key K) *hotEntry[K] {
	d.observe(key)
	return d.lookup(key)
}

// lookup returns key's entry when key is hot.
func (d *detector[K]) lookup(key K) *hotEntry[K] { return d.hot.Load().m[key] }

// promoteInline runs the selector over the hot keys and key, on the read
// path: what it changed is logged after the lock is released, so a slow
// log handler holds up the reader that promoted, not every reader.
func (d *detector[K]) promoteInline(key K) {
	d.mu.Lock()
	changed := d.promoteLocked(key)
	d.mu.Unlock()
	d.announce(changed)
}

func (d *detector[K]) promoteLocked(key K) []hotChange {
	cur := d.hot.Load()
	if cur.m[key] != nil {
		return nil
	}
	cluster := d.clusterRates()
	view := make([]detect.KeyRate[K], 0, len(cur.m)+1)
	for k := range cur.m {
		view = append(view, d.withCluster(d.rec.Rate(k), cluster))
	}
	view = append(view, d.withCluster(d.rec.Rate(key), cluster))
	return d.applyLocked(detect.Select(view, names(cur), d.th, detect.PromotePass), view)
}

// reselect runs the selector over every key the recorder tracks, and the
// keys of the latest cluster-wide reading. The scan runs before taking the
// lock, so an inline promotion on the read path never waits for it.
func (d *detector[K]) reselect(pass detect.Pass) {
	view := d.rec.Rates(min(d.th.Warm, d.th.Hot))
	cluster := d.clusterRates()
	d.mu.Lock()
	changed := d.reselectLocked(view, cluster, pass)
	d.mu.Unlock()
	d.announce(changed)
}

func (d *detector[K]) reselectLocked(view []detect.KeyRate[K], cluster map[K]float64, pass detect.Pass) []hotChange {
	cur := d.hot.Load()
	seen := make(map[K]bool, len(view))
	for i, kr := range view {
		seen[kr.Key] = true
		view[i] = d.withCluster(kr, cluster)
	}
	for k := range cur.m {
		if !seen[k] {
			seen[k] = true
			view = append(view, d.withCluster(d.rec.Rate(k), cluster))
		}
	}
	for k := range cluster {
		if !seen[k] {
			view = append(view, d.withCluster(d.rec.Rate(k), cluster))
		}
	}
	return d.applyLocked(detect.Select(view, names(cur), d.th, pass), view)
}

// clusterRates returns the latest cluster-wide reading; nil before the
// first, or without aggregation.
func (d *detector[K]) clusterRates() map[K]float64 {
	if p := d.cluster.Load(); p != nil {
		return *p
	}
	return nil
}

// withCluster sets kr's cluster rate from the reading, on the local scale.
func (d *detector[K]) withCluster(kr detect.KeyRate[K], cluster map[K]float64) detect.KeyRate[K] {
	kr.Cluster = cluster[kr.Key] * d.clusterScale
	return kr
}

// names maps the hot keys to their Redis keys, as detect.Select takes them.
func names[K comparable](s *hotSet[K]) map[K]string {
	m := make(map[K]string, len(s.m))
	for k, e := range s.m {
		m[k] = e.key
	}
	return m
}

// hotChange is a promotion or demotion to log, once the detector's lock
// is released (announce).
type hotChange struct {
	msg   string
	attrs []any
}

// announce logs the changes of the hot set.
func (d *detector[K]) announce(changed []hotChange) {
	for _, ch := range changed {
		d.log.Info(ch.msg, ch.attrs...)
	}
}

// applyLocked publishes the new hot set, then cleans up after each demoted
// key: its local value, registration and failure count go, in that order.
// It returns the changes, for the caller to announce after unlocking.
func (d *detector[K]) applyLocked(dec detect.Decision[K], view []detect.KeyRate[K]) []hotChange {
	if len(dec.Promote) == 0 && len(dec.Demote) == 0 {
		return nil
	}
	rates := make(map[K]detect.KeyRate[K], len(view))
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

	changed := make([]hotChange, 0, len(demoted)+len(dec.Promote))
	for _, e := range demoted {
		d.demote(e)
		d.demotions.Add(1)
		changed = append(changed, hotChange{"hotkey: demoted", append(d.rateAttrs(e.key, rates[e.k]), "hot_for", now.Sub(e.since))})
	}
	for _, k := range dec.Promote {
		d.promotions.Add(1)
		changed = append(changed, hotChange{"hotkey: promoted", d.rateAttrs(rates[k].Name, rates[k])})
	}
	return changed
}

// rateAttrs describes a key in a log line: its name, its rate here and,
// with aggregation on, its cluster-wide rate.
func (d *detector[K]) rateAttrs(name string, kr detect.KeyRate[K]) []any {
	attrs := []any{"key", operr.Short(name), "qps", max(kr.QPS, kr.Burst)}
	if d.cluster.Load() != nil {
		attrs = append(attrs, "cluster_qps", kr.Cluster/d.clusterScale)
	}
	return attrs
}

// hit records a local hit of k, given a uniformly random rnd: in the
// recorder, and one time in 1<<detect.SampleBits in the entry's hit count,
// weighted to keep the expected count exact.
func (d *detector[K]) hit(k K, rnd uint32) {
	if d.rec.RecordSampled(k, rnd) {
		if e := d.lookup(k); e != nil {
			e.hits.Add(1 << detect.SampleBits)
		}
	}
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
