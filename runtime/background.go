package runtime

import (
	"errors"
	"hash/maphash"
	"time"
)

// schedule says when each periodic job is next due. One goroutine ticks at
// the finest period and runs whatever is due, so background work costs one
// goroutine and one timer per Cache.
type schedule struct {
	period                            time.Duration
	promote, demote, refresh, monitor time.Time
	promoteEvery, demoteEvery         time.Duration
	refreshEvery, monitorEvery        time.Duration
}

func newSchedule(cfg Config, now time.Time) schedule {
	s := schedule{
		period:       cfg.Window / slots,
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
func due(next *time.Time, every time.Duration, now time.Time) bool {
	if every <= 0 || now.Before(*next) {
		return false
	}
	*next = now.Add(every)
	return true
}

func (c *Cache[K, V]) run() {
	defer c.wg.Done()
	ticks, stop := c.cfg.Clock.NewTicker(c.sched.period)
	defer stop()
	for {
		select {
		case <-c.done:
			return
		case <-ticks:
			c.tick(c.cfg.Clock.Now())
		}
	}
}

// tick advances the detection window to now and runs the jobs that are due.
func (c *Cache[K, V]) tick(now time.Time) {
	c.tickMu.Lock()
	defer c.tickMu.Unlock()
	s := &c.sched

	rec := c.det.rec
	from := rec.cur.Load()
	rec.Advance(now)
	to := rec.cur.Load()
	gets, hits := c.reads()
	for slot := max(from+1, to-ring+1); slot <= to; slot++ {
		c.getSnaps[slot%ring].Store(gets)
	}
	if c.agg != nil && to > from {
		c.report(from) // the slot that just ended; any after it saw no reads
	}

	var pass Pass
	if due(&s.promote, s.promoteEvery, now) {
		pass |= PromotePass
	}
	if due(&s.demote, s.demoteEvery, now) {
		pass |= DemotePass
	}
	if pass != 0 {
		if c.agg != nil {
			c.readCluster()
		}
		c.det.reselect(pass)
	}
	if due(&s.refresh, s.refreshEvery, now) {
		c.refresh()
	}
	c.hist.add(now, gets, hits)
	if due(&s.monitor, s.monitorEvery, now) {
		c.logStats()
	}
}

// getQPS is the number of reads over the window's complete slots divided by
// the window; before a whole window has passed it counts from the start,
// so a fresh Cache never reports an inflated rate.
func (c *Cache[K, V]) getQPS() float64 {
	cur := c.det.rec.cur.Load()
	n := c.getSnaps[cur%ring].Load() - c.getSnaps[(cur+ring-slots)%ring].Load()
	return float64(n) / c.cfg.Window.Seconds()
}

// refresh reloads every registered hot key with pipelined MGETs (see
// mget): its cost grows with round trips of hundreds of keys, not with
// keys. A key missing from Redis is dropped locally; a key that fails
// RefreshFailures times in a row is dropped too, because its staleness is
// unknown.
func (c *Cache[K, V]) refresh() {
	type job struct {
		e   *hotEntry[K]
		gen uint64
	}
	var jobs []job
	var keys []string
	for _, e := range c.det.hot.Load().m {
		e.mu.Lock()
		if e.registered {
			jobs = append(jobs, job{e: e, gen: e.gen.Load()})
			keys = append(keys, e.key)
		}
		e.mu.Unlock()
	}
	if len(jobs) == 0 {
		return
	}
	raw, errs := c.mget(c.ctx, keys)
	var failed refreshFailures
	for i, j := range jobs {
		if errs != nil && errs[i] != nil {
			failed.add(j.e.key, c.refreshFailed(j.e), errs[i])
			continue
		}
		if raw[i] == nil {
			c.dropLocal(j.e, j.gen) // deleted
			c.count.refreshes.Add(1)
			continue
		}
		sum := maphash.Bytes(rawSeed, raw[i]) | 1 // never 0, which means unknown
		if c.unchanged(j.e, j.gen, sum) {
			c.count.refreshes.Add(1)
			continue
		}
		v, err := c.decodeValue(j.e.key, raw[i])
		if errors.Is(err, ErrNotFound) {
			err, v = nil, nil // the placeholder of an absent row
		}
		if err != nil {
			failed.add(j.e.key, c.refreshFailed(j.e), err)
			continue
		}
		c.count.refreshes.Add(1)
		j.e.mu.Lock()
		c.det.setFailuresLocked(j.e, 0)
		j.e.mu.Unlock()
		c.storeRaw(j.e, j.gen, v, sum)
	}
	c.logRefreshFailures(failed)
}

// rawSeed seeds the hashes of refreshed values.
var rawSeed = maphash.MakeSeed()

// unchanged reports that e's local copy was stored by a refresh from bytes
// hashing to sum, with nothing written since: the copy is current, and
// decoding the same bytes again would only cost time. Its failure count is
// reset as for any good refresh.
func (c *Cache[K, V]) unchanged(e *hotEntry[K], gen, sum uint64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead || e.sum != sum || e.gen.Load() != gen {
		return false
	}
	c.det.setFailuresLocked(e, 0)
	return true
}

// dropLocal forgets e's local copy and registration unless a write came in
// since gen, in which case the write's copy is newer than what refresh saw.
func (c *Cache[K, V]) dropLocal(e *hotEntry[K], gen uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen.Load() == gen {
		c.det.forgetLocked(e)
	}
}

// refreshFailed counts a failed refresh of e and drops its copy after
// RefreshFailures in a row, reporting whether it did.
func (c *Cache[K, V]) refreshFailed(e *hotEntry[K]) (dropped bool) {
	c.count.refreshErrors.Add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	failures := e.failures + 1
	c.det.setFailuresLocked(e, failures)
	if failures >= c.cfg.RefreshFailures {
		c.det.forgetLocked(e)
		return true
	}
	return false
}

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

// refreshLogEvery spaces the lines about failed refreshes: with Redis down,
// every refresh of every hot key fails, and one line now and then says so.
const refreshLogEvery = 10 * time.Second

// logRefreshFailures logs a refresh's failures, at most once per
// refreshLogEvery, counting the refreshes whose failures went unlogged.
// Only the background tick calls it, under tickMu.
func (c *Cache[K, V]) logRefreshFailures(f refreshFailures) {
	if f.keys == 0 {
		return
	}
	now := c.cfg.Clock.Now()
	if now.Before(c.refreshLog.next) {
		c.refreshLog.suppressed++
		return
	}
	c.log.Warn("hotkey: refresh failed", "keys", f.keys, "dropped", f.dropped, "key", f.key, "err", f.err,
		"unlogged_refreshes", c.refreshLog.suppressed)
	c.refreshLog.next, c.refreshLog.suppressed = now.Add(refreshLogEvery), 0
}

// logStats writes the periodic monitor line.
func (c *Cache[K, V]) logStats() {
	st := c.Stats()
	c.log.Info("hotkey: stats",
		"reads/s", st.GetQPS,
		"hot", len(st.HotKeys),
		"hit_rate", st.HitRate,
		"share", st.TrafficShare,
		"local", st.LocalSize,
		"redis_errors", st.RedisErrors,
	)
}
