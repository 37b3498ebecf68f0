package runtime

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
)

// schedule says when each periodic job is next due. One goroutine ticks at
// the finest period and runs whatever is due, so background work costs one
// goroutine and one timer per Cache, and a goroutine per job that waits on
// Redis while it runs (see job).
type schedule struct {
	period                            time.Duration
	promote, demote, refresh, monitor time.Time
	promoteEvery, demoteEvery         time.Duration
	refreshEvery, monitorEvery        time.Duration
}

func newSchedule(cfg Config, now time.Time) schedule {
	s := schedule{
		period:       cfg.Window / detect.Slots,
		promoteEvery: cfg.PromoteEvery,
		demoteEvery:  cfg.DemoteEvery,
		refreshEvery: cfg.Refresh,
		monitorEvery: cfg.MonitorEvery,
	}
	for _, d := range []time.Duration{cfg.PromoteEvery, cfg.DemoteEvery, cfg.Refresh, cfg.MonitorEvery} {
		if d > 0 {
			s.period = min(s.period, d)
		}
	}
	s.promote = now.Add(s.promoteEvery)
	s.demote = now.Add(s.demoteEvery)
	s.refresh = now.Add(s.refreshEvery)
	s.monitor = now.Add(s.monitorEvery)
	return s
}

// due reports whether a job with interval every is due at now, and if so
// schedules its next run.
//
// A job is due a little early rather than a whole tick late: ticks arrive
// with jitter, and a tick a microsecond before the job's time would
// otherwise push it to the next one, doubling a refresh interval that
// equals the tick period.
func (s *schedule) due(next *time.Time, every time.Duration, now time.Time) bool {
	if every <= 0 || now.Add(s.period/2).Before(*next) {
		return false
	}
	*next = next.Add(every)
	if next.Before(now) { // fell behind: do not run it twice in a row
		*next = now.Add(every)
	}
	return true
}

func (c *Cache[K, V]) run() {
	every(c.cfg.Clock, c.sched.period, c.done, func() { c.tick(c.cfg.Clock.Now()) })
}

// tick advances the detection window to now, runs the jobs that are due
// and adds the second's sample to History. It never waits on Redis: the
// jobs that do run on goroutines of their own (see job).
func (c *Cache[K, V]) tick(now time.Time) {
	c.tickMu.Lock()
	defer c.tickMu.Unlock()
	s := &c.sched

	rec := c.det.rec
	from := rec.Current()
	rec.Advance(now)
	to := rec.Current()
	reads, hits := c.reads()
	ended := reads - c.readSnaps[from%detect.Ring].Load() // reads since slot from began
	for slot := max(from+1, to-detect.Ring+1); slot <= to; slot++ {
		c.readSnaps[slot%detect.Ring].Store(reads)
	}
	if c.agg != nil {
		if to > from {
			// The slot that just ended; any after it saw no reads.
			c.agg.queue(slotReport{from, ended})
		}
		if c.agg.waiting() {
			c.start(&c.jobs.report, "aggregation report", c.reportPending)
		}
	}

	var pass detect.Pass
	if s.due(&s.promote, s.promoteEvery, now) {
		pass |= detect.PromotePass
	}
	if s.due(&s.demote, s.demoteEvery, now) {
		pass |= detect.DemotePass
	}
	if pass != 0 {
		c.selectHot(pass)
	}
	if s.due(&s.refresh, s.refreshEvery, now) {
		c.start(&c.jobs.refresh, "refresh", c.refresh)
	}
	c.hist.add(total{
		at: now, reads: reads, hits: hits,
		errs:   c.count.redisErrors.Load() + c.count.failedFast.Load(),
		stales: c.count.staleReads.Load(),
	})
	if s.due(&s.monitor, s.monitorEvery, now) {
		c.logStats()
	}
}

// selectHot runs a selection pass. With aggregation it runs on the
// cluster read's goroutine once the read is done, so that it sees the
// reading taken for it; while the last read still waits on Redis, it runs
// at once on the last reading.
func (c *Cache[K, V]) selectHot(pass detect.Pass) {
	if c.agg != nil && c.start(&c.jobs.cluster, "cluster read", func() {
		c.readCluster()
		c.det.reselect(pass)
	}) {
		return
	}
	c.det.reselect(pass)
}

// job is one kind of background work that waits on Redis: the
// aggregation report, the cluster read, the refresh. Each run has a
// goroutine of its own, so that the tick, which samples History and runs
// detection, never waits on Redis: a node that accepts connections and
// never answers would stop both, and the live page would show no errors
// at the height of an outage. A job runs once at a time: a tick that
// finds its last run still waiting skips it.
type job struct {
	running sync.Mutex   // held by the run under way
	skipped atomic.Int64 // runs skipped while the one under way waits
}

// jobs are a Cache's kinds of job.
type jobs struct{ report, cluster, refresh job }

// start runs f, the job j called name, on a goroutine of its own, which
// Close waits for, unless j's last run is still under way; it reports
// whether f started. Only the first run skipped while one waits is logged,
// and when that one ends, how many were skipped.
func (c *Cache[K, V]) start(j *job, name string, f func()) bool {
	if !j.running.TryLock() {
		if j.skipped.Add(1) == 1 {
			c.log.Warn("hotkey: background work still waits on Redis; its next runs are skipped until it ends", "job", name)
		}
		return false
	}
	started := c.g.Go(func() {
		defer j.running.Unlock()
		f()
		if n := j.skipped.Swap(0); n > 0 && c.ctx.Err() == nil {
			c.log.Info("hotkey: background work ended", "job", name, "skipped_runs", n)
		}
	})
	if !started {
		j.running.Unlock()
	}
	return started
}

// readsPerSec is the number of reads over the window's complete slots divided by
// the window; before a whole window has passed it counts from the start,
// so a fresh Cache never reports an inflated rate.
func (c *Cache[K, V]) readsPerSec() float64 {
	cur := c.det.rec.Current()
	n := c.readSnaps[cur%detect.Ring].Load() - c.readSnaps[(cur+detect.Ring-detect.Slots)%detect.Ring].Load()
	return float64(n) / c.cfg.Window.Seconds()
}

// logStats writes the periodic monitor line.
func (c *Cache[K, V]) logStats() {
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
