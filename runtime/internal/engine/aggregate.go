package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/aggregate"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/redis/go-redis/v9"
)

// Cluster-wide detection (Config.Aggregate). A key read evenly by twenty
// replicas is, to each of them, read at a twentieth of its rate, and may
// never reach HotQPS anywhere while its Redis node burns. So every
// replica, once per slot, adds its AggregateTop busiest keys of the slot
// just completed to a sorted set shared by all replicas (see package
// internal/aggregate for the layout), and at every selection reads the
// last window of those sets back: a key whose rates sum to ClusterHotQPS
// is a candidate on every replica that reported it, ranked by its cluster
// rate put on the local scale (KeyRate.Cluster).
//
// Only keys this replica reported can be promoted this way: the recorder
// knows a key by K, and the sets by name alone, so the names of the last
// window's reports are mapped back to their keys. That also keeps a
// replica from caching a key it hardly reads.

// aggregator is a Cache's part in cluster-wide detection. The report and
// the cluster read use it, each on its own goroutine (see
// background.Job). It is given what it uses, by New.
type aggregator[K comparable, V any] struct {
	rdb    redis.UniversalClient
	det    *fresh.Detector[K] // whose recorder it reports, and whose cluster rates it sets
	entity string             // which names the sets
	top    int                // AggregateTop
	window time.Duration      // Window
	now    func() time.Time
	done   context.Context // ended by Close
	log    *slog.Logger
	// reports and errors count the reports sent and the reports and
	// reads that failed (Stats.AggregateReports, Stats.AggregateErrors).
	reports, errors *atomic.Uint64

	mu sync.Mutex // guards reported
	// reported maps the names this replica reported in the last window to
	// their keys: at most AggregateTop per slot.
	reported map[string]reportedKey[K]
	// pending holds the slots that ended and are not reported yet.
	pending aggregate.Queue
	// health logs only the first failure of a run, and its end.
	health aggregate.Health
}

type reportedKey[K comparable] struct {
	k    K
	slot int64 // the last slot it was reported for
}

func newAggregator[K comparable, V any](c *Cache[K, V]) *aggregator[K, V] {
	return &aggregator[K, V]{
		rdb: c.rdb, det: c.det, entity: c.cfg.Entity, top: c.cfg.AggregateTop, window: c.cfg.Window,
		now: c.cfg.Clock.Now, done: c.ctx, log: c.log,
		reports: &c.count.aggregateReports, errors: &c.count.aggregateErrors,
		reported: map[string]reportedKey[K]{},
	}
}

// reportPending reports every slot queued, in order, until none is left:
// the aggregation report's job. A tick that finds it running leaves its
// slot in the queue, for this run or the next tick's.
func (a *aggregator[K, V]) reportPending() {
	for {
		p := a.pending.Take()
		if len(p) == 0 {
			return
		}
		for _, e := range p {
			a.report(e.Slot, e.Reads)
		}
	}
}

// Detection is what of c the hot set depends on.
func Detection(c config.Config) fresh.Detection {
	return fresh.Detection{
		Recorder: detect.Params{
			Window:        c.Window,
			HotQPS:        c.HotQPS,
			WarmQPS:       c.WarmQPS,
			RecorderSize:  c.RecorderSize,
			InactiveAfter: c.InactiveAfter,
			Aggregate:     c.Aggregate,
		},
		Thresholds:   detect.Thresholds{Hot: c.HotQPS, Warm: c.WarmQPS, TopN: c.TopN},
		ClusterScale: c.HotQPS / ClusterHotQPS(c),
		Clock:        c.Clock,
		Log:          c.Logger,
	}
}

// ClusterHotQPS is the cluster-wide promotion rate in effect.
func ClusterHotQPS(c config.Config) float64 {
	if c.ClusterHotQPS > 0 {
		return c.ClusterHotQPS
	}
	return c.HotQPS
}

// report adds the busiest keys of slot, a slot just completed, and reads,
// the entity's reads in it, to the slot's set: at most AggregateTop+1
// ZINCRBYs and one PEXPIRE, in one pipeline. Nothing is sent for a slot
// without reads.
func (a *aggregator[K, V]) report(slot int64, reads uint64) {
	top := a.det.Rec.Top(slot, a.top)
	counts := make([]aggregate.Count, len(top))
	a.mu.Lock()
	for name, r := range a.reported {
		if r.slot < slot-detect.Slots { // outside every window still to be read
			delete(a.reported, name)
		}
	}
	for i, sc := range top {
		counts[i] = aggregate.Count{Name: sc.Name, N: uint64(sc.Count)}
		a.reported[sc.Name] = reportedKey[K]{k: sc.Key, slot: slot}
	}
	a.mu.Unlock()
	if len(top) == 0 {
		return
	}
	pipe := a.rdb.Pipeline()
	aggregate.Report(a.done, pipe, a.entity, slot, counts, reads, 2*a.window)
	if _, err := pipe.Exec(a.done); err != nil {
		a.failed("report", err)
		return
	}
	a.reports.Add(1)
	a.works()
}

// readCluster reads the cluster-wide rates of the last window every
// replica has reported, and hands those of the keys this replica reported
// to the detector. A failed read keeps the previous reading: Redis failing
// is no reason to demote the keys it is spared.
func (a *aggregator[K, V]) readCluster() {
	first, last := aggregate.Span(a.now(), a.window)
	sums, err := aggregate.Read(a.done, a.rdb, a.entity, first, last, a.top)
	if err != nil {
		a.failed("read", err)
		return
	}
	a.works()
	window := a.window.Seconds()
	a.mu.Lock()
	rates := make(map[K]float64, min(len(sums), len(a.reported)))
	for name, n := range sums {
		if r, ok := a.reported[name]; ok {
			rates[r.k] = n / window
		}
	}
	a.mu.Unlock()
	a.det.Cluster.Store(&rates)
}

// failed counts a failed report or read. Only the first failure
// after a success is logged: a Redis outage would otherwise log a line
// every slot.
func (a *aggregator[K, V]) failed(op string, err error) {
	if a.done.Err() != nil {
		return // Close interrupted it
	}
	a.errors.Add(1)
	if a.health.Failed() {
		a.log.Warn("hotkey: cluster aggregation failed; reads are unaffected, and detection keeps the last cluster reading", "op", op, "err", err)
	}
}

func (a *aggregator[K, V]) works() {
	if a.health.Works() {
		a.log.Info("hotkey: cluster aggregation works again")
	}
}
