package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/aggregate"
	"github.com/hotkeygen/hotkeygen/runtime/internal/background"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/rates"
)

// newSchedule is the schedule of a Cache configured by cfg, as of now.
func newSchedule(cfg config.Config, now time.Time) background.Schedule {
	return background.New(cfg.Window/detect.Slots, now, cfg.PromoteEvery, cfg.DemoteEvery, cfg.Refresh, cfg.MonitorEvery)
}

// ticker is a Cache's one ticking goroutine: it advances the detection
// window, runs the selection passes and starts the jobs that wait on
// Redis (the aggregation report, the cluster read, refresh), each off the
// tick, and samples History.
type ticker[K comparable, V any] struct {
	c     *Cache[K, V]
	mu    sync.Mutex // serialises ticks
	sched background.Schedule
	jobs  jobs
	// readSnaps holds the total of reads at the start of each slot, for
	// ReadsPerSec over the window.
	readSnaps [detect.Ring]atomic.Uint64
	// toldTooLong is set once a key too long to track was logged.
	toldTooLong bool
}

func (t *ticker[K, V]) run() {
	c := t.c
	background.Every(c.cfg.Clock, t.sched.Period, c.done, func() { t.tick(c.cfg.Clock.Now()) })
}

// tick advances the detection window to now, runs the jobs that are due
// and adds the second's sample to History. It never waits on Redis: the
// jobs that do run on goroutines of their own (see background.Job).
func (t *ticker[K, V]) tick(now time.Time) {
	c := t.c
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.sched

	rec := c.det.Rec
	from := rec.Current()
	rec.Advance(now)
	to := rec.Current()
	reads, hits := c.reads()
	ended := reads - t.readSnaps[from%detect.Ring].Load() // reads since slot from began
	for slot := max(from+1, to-detect.Ring+1); slot <= to; slot++ {
		t.readSnaps[slot%detect.Ring].Store(reads)
	}
	if c.agg != nil {
		if to > from {
			// The slot that just ended; any after it saw no reads.
			c.agg.pending.Add(aggregate.Ended{Slot: from, Reads: ended})
		}
		if c.agg.pending.Waiting() {
			t.jobs.report.Start(c.ctx, &c.g, c.log, "aggregation report", c.agg.reportPending)
		}
	}

	var pass detect.Pass
	if s.Due(&s.Promote, now) {
		pass |= detect.PromotePass
	}
	if s.Due(&s.Demote, now) {
		pass |= detect.DemotePass
	}
	if pass != 0 {
		t.selectHot(pass)
	}
	if !t.toldTooLong && rec.TooLong() > 0 {
		t.toldTooLong = true
		c.log.Warn("hotkey: a key too long to track is read often; it never becomes hot, and every read of it goes to Redis (Stats.KeysTooLong); a larger recorder_size holds longer keys",
			"longest_tracked_bytes", rec.LongestName())
	}
	if s.Due(&s.Refresh, now) {
		t.jobs.refresh.Start(c.ctx, &c.g, c.log, "refresh", c.refresh.run)
	}
	c.hist.Add(rates.Totals{
		At: now, Reads: reads, Hits: hits,
		Errs:   c.count.redisErrors.Load() + c.count.failedFast.Load(),
		Stales: c.count.staleReads.Load(),
	})
	if s.Due(&s.Monitor, now) {
		t.logStats()
	}
}

// selectHot runs a selection pass. With aggregation it runs on the
// cluster read's goroutine once the read is done, so that it sees the
// reading taken for it; while the last read still waits on Redis, it runs
// at once on the last reading.
func (t *ticker[K, V]) selectHot(pass detect.Pass) {
	c := t.c
	if c.agg != nil && t.jobs.cluster.Start(c.ctx, &c.g, c.log, "cluster read", func() {
		c.agg.readCluster()
		c.det.Reselect(pass)
	}) {
		return
	}
	c.det.Reselect(pass)
}

// jobs are a Cache's kinds of background work that wait on Redis, each
// run off the tick, once at a time (see background.Job).
type jobs struct{ report, cluster, refresh background.Job }

// logStats writes the periodic monitor line.
func (t *ticker[K, V]) logStats() {
	c := t.c
	st := c.Stats()
	c.log.Info("hotkey: stats",
		"reads/s", st.ReadsPerSec,
		"hot", len(st.HotKeys),
		"hit_rate", st.HitRate,
		"share", st.TrafficShare,
		"local", st.LocalSize,
		"redis_errors", st.RedisErrors,
	)
}
