package fresh

import (
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
)

// Detector owns the recorder and the hot set: it decides which keys are
// hot and applies those decisions in order.
type Detector[K comparable] struct {
	Rec   *detect.Recorder[K]
	th    detect.Thresholds
	clock Clock
	log   *slog.Logger
	// demote marks a demoted key's entry dead and drops its local copy
	// and registration (Copies.Demote).
	demote func(*Entry[K])

	Set atomic.Pointer[hotSet[K]]
	Mu  sync.Mutex // serialises changes of hot

	// Cluster is the latest cluster-wide reading, nil until there is one:
	// the rates of the keys this instance reported, summed over every
	// replica. clusterScale (HotQPS/ClusterHotQPS) puts them on the scale
	// of the per-instance thresholds.
	Cluster      atomic.Pointer[map[K]float64]
	clusterScale float64

	Promotions atomic.Uint64
	Demotions  atomic.Uint64
}

// Detection is what the detector takes of the Cache's configuration.
type Detection struct {
	Recorder   detect.Params
	Thresholds detect.Thresholds
	// ClusterScale (HotQPS/ClusterHotQPS) puts cluster-wide rates on the
	// scale of the per-instance thresholds.
	ClusterScale float64
	Clock        Clock
	Log          *slog.Logger
}

// NewDetector returns an empty hot set of keys named by name; demote
// cleans up after a key leaves it.
func NewDetector[K comparable](cfg Detection, name func(K) string, demote func(*Entry[K])) *Detector[K] {
	d := &Detector[K]{
		Rec:    detect.NewRecorder(cfg.Recorder, cfg.Clock.Now(), name),
		th:     cfg.Thresholds,
		clock:  cfg.Clock,
		log:    cfg.Log,
		demote: demote,

		clusterScale: cfg.ClusterScale,
	}
	d.Set.Store(newHotSet(map[K]*Entry[K]{}))
	return d
}

// Observe records one access and promotes key at once if the access made
// it burst past the hot rate: a key at ten times hot_qps is served locally
// within a fraction of a slot, not at the next tick.
func (d *Detector[K]) Observe(key K) {
	if d.Rec.Record(key) {
		d.promoteInline(key)
	}
}

// Seen records a read of key that went to Redis, and returns key's entry
// when key is hot (after the read, if it made key hot).
func (d *Detector[K]) Seen(key K) *Entry[K] {
	d.Observe(key)
	return d.Lookup(key)
}

// Lookup returns key's entry when key is hot.
func (d *Detector[K]) Lookup(key K) *Entry[K] { return d.Set.Load().ByKey[key] }

// promoteInline runs the selector over the hot keys and key, on the read
// path: what it changed is logged after the lock is released, so a slow
// log handler holds up the reader that promoted, not every reader.
func (d *Detector[K]) promoteInline(key K) {
	d.Mu.Lock()
	changed := d.promoteLocked(key)
	d.Mu.Unlock()
	d.announce(changed)
}

func (d *Detector[K]) promoteLocked(key K) []hotChange {
	cur := d.Set.Load()
	if cur.ByKey[key] != nil {
		return nil
	}
	cluster := d.ClusterRates()
	view := make([]detect.KeyRate[K], 0, len(cur.ByKey)+1)
	for k := range cur.ByKey {
		view = append(view, d.withCluster(d.Rec.Rate(k), cluster))
	}
	view = append(view, d.withCluster(d.Rec.Rate(key), cluster))
	return d.ApplyLocked(detect.Select(view, names(cur), d.th, detect.PromotePass), view)
}

// Reselect runs the selector over every key the recorder tracks, and the
// keys of the latest cluster-wide reading. The scan runs before taking the
// lock, so an inline promotion on the read path never waits for it.
func (d *Detector[K]) Reselect(pass detect.Pass) {
	view := d.Rec.Rates(min(d.th.Warm, d.th.Hot))
	cluster := d.ClusterRates()
	d.Mu.Lock()
	changed := d.reselectLocked(view, cluster, pass)
	d.Mu.Unlock()
	d.announce(changed)
}

func (d *Detector[K]) reselectLocked(view []detect.KeyRate[K], cluster map[K]float64, pass detect.Pass) []hotChange {
	cur := d.Set.Load()
	seen := make(map[K]bool, len(view))
	for i, kr := range view {
		seen[kr.Key] = true
		view[i] = d.withCluster(kr, cluster)
	}
	for k := range cur.ByKey {
		if !seen[k] {
			seen[k] = true
			view = append(view, d.withCluster(d.Rec.Rate(k), cluster))
		}
	}
	for k := range cluster {
		if !seen[k] {
			view = append(view, d.withCluster(d.Rec.Rate(k), cluster))
		}
	}
	return d.ApplyLocked(detect.Select(view, names(cur), d.th, pass), view)
}

// ClusterRates returns the latest cluster-wide reading; nil before the
// first, or without aggregation.
func (d *Detector[K]) ClusterRates() map[K]float64 {
	if p := d.Cluster.Load(); p != nil {
		return *p
	}
	return nil
}

// withCluster sets kr's cluster rate from the reading, on the local scale.
func (d *Detector[K]) withCluster(kr detect.KeyRate[K], cluster map[K]float64) detect.KeyRate[K] {
	kr.Cluster = cluster[kr.Key] * d.clusterScale
	return kr
}

// names maps the hot keys to their Redis keys, as detect.Select takes them.
func names[K comparable](s *hotSet[K]) map[K]string {
	m := make(map[K]string, len(s.ByKey))
	for k, e := range s.ByKey {
		m[k] = e.Key
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
func (d *Detector[K]) announce(changed []hotChange) {
	for _, ch := range changed {
		d.log.Info(ch.msg, ch.attrs...)
	}
}

// ApplyLocked publishes the new hot set, then cleans up after each demoted
// key: its local value, registration and failure count go, in that order.
// It returns the changes, for the caller to announce after unlocking.
func (d *Detector[K]) ApplyLocked(dec detect.Decision[K], view []detect.KeyRate[K]) []hotChange {
	if len(dec.Promote) == 0 && len(dec.Demote) == 0 {
		return nil
	}
	rates := make(map[K]detect.KeyRate[K], len(view))
	for _, kr := range view {
		rates[kr.Key] = kr
	}
	cur := d.Set.Load()
	m := maps.Clone(cur.ByKey)
	now := d.clock.Now()
	var demoted []*Entry[K]
	for _, k := range dec.Demote {
		if e := m[k]; e != nil {
			demoted = append(demoted, e)
			delete(m, k)
		}
	}
	for _, k := range dec.Promote {
		m[k] = &Entry[K]{K: k, Key: rates[k].Name, Since: now}
	}
	d.Set.Store(newHotSet(m))

	changed := make([]hotChange, 0, len(demoted)+len(dec.Promote))
	for _, e := range demoted {
		d.demote(e)
		d.Demotions.Add(1)
		changed = append(changed, hotChange{"hotkey: demoted", append(d.rateAttrs(e.Key, rates[e.K]), "hot_for", now.Sub(e.Since))})
	}
	for _, k := range dec.Promote {
		d.Promotions.Add(1)
		changed = append(changed, hotChange{"hotkey: promoted", d.rateAttrs(rates[k].Name, rates[k])})
	}
	return changed
}

// rateAttrs describes a key in a log line: its name, its rate here and,
// with aggregation on, its cluster-wide rate.
func (d *Detector[K]) rateAttrs(name string, kr detect.KeyRate[K]) []any {
	attrs := []any{"key", operr.Short(name), "qps", max(kr.QPS, kr.Burst)}
	if d.Cluster.Load() != nil {
		attrs = append(attrs, "cluster_qps", kr.Cluster/d.clusterScale)
	}
	return attrs
}

// Hit records a local hit of k, given a uniformly random rnd: in the
// recorder, and one time in 1<<detect.SampleBits in the entry's hit count,
// weighted to keep the expected count exact.
func (d *Detector[K]) Hit(k K, rnd uint32) {
	if d.Rec.RecordSampled(k, rnd) {
		if e := d.Lookup(k); e != nil {
			e.Hits.Add(1 << detect.SampleBits)
		}
	}
}

// hotSet is an immutable set of hot keys, swapped whole on every change so
// the read path looks it up without a lock.
type hotSet[K comparable] struct {
	ByKey  map[K]*Entry[K]
	byName map[string]*Entry[K] // by Redis key, for invalidations
}

func newHotSet[K comparable](m map[K]*Entry[K]) *hotSet[K] {
	s := &hotSet[K]{ByKey: m, byName: make(map[string]*Entry[K], len(m))}
	for _, e := range m {
		s.byName[e.Key] = e
	}
	return s
}
