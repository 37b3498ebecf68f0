package runtime

import (
	"sync"
	"time"
)

// HistoryLen is how many samples History keeps: ten minutes at one a
// second, enough for a chart of what just happened, bounded whatever the
// uptime.
const HistoryLen = 600

// Sample is the traffic of one interval (about a second) of a Cache: the
// differences of its counters between two marks of the background tick,
// per second.
type Sample struct {
	At         time.Time // end of the interval
	Reads      float64   // reads per second
	Hits       float64   // reads per second served locally
	RedisReads float64   // reads per second that went to Redis
	// RedisErrors are the Redis commands that failed, and the calls
	// refused without asking Redis because it was unreachable, per second:
	// Stats.RedisErrors plus Stats.FailedFast.
	RedisErrors float64
	// StaleReads are the reads per second answered from a local copy no
	// live invalidation session vouched for (Stats.StaleReads).
	StaleReads float64
}

// history keeps the counters' totals at one-second marks in a ring; the
// background tick adds to it, so keeping it costs the read path nothing.
type history struct {
	mu     sync.Mutex
	totals [HistoryLen + 1]total // one more than the samples: rates are deltas
	n      int                   // totals held
	next   int                   // where the next total goes
}

// total is the counters History follows, at one mark.
type total struct {
	at                        time.Time
	reads, hits, errs, stales uint64
}

// add records the totals t at t.at, unless the last mark is less than a
// second old.
func (h *history) add(t total) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n > 0 && t.at.Sub(h.at(h.n-1).at) < time.Second {
		return
	}
	h.totals[h.next] = t
	h.next = (h.next + 1) % len(h.totals)
	h.n = min(h.n+1, len(h.totals))
}

// at returns the i-th total held, oldest first; h.mu is held.
func (h *history) at(i int) total {
	return h.totals[(h.next-h.n+i+len(h.totals))%len(h.totals)]
}

func (h *history) samples() []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n < 2 {
		return nil
	}
	out := make([]Sample, 0, h.n-1)
	prev := h.at(0)
	for i := 1; i < h.n; i++ {
		t := h.at(i)
		sec := t.at.Sub(prev.at).Seconds()
		rate := func(now, before uint64) float64 { return float64(now-before) / sec }
		reads, hits := rate(t.reads, prev.reads), rate(t.hits, prev.hits)
		out = append(out, Sample{
			At: t.at, Reads: reads, Hits: hits, RedisReads: reads - hits,
			RedisErrors: rate(t.errs, prev.errs), StaleReads: rate(t.stales, prev.stales),
		})
		prev = t
	}
	return out
}

// History returns the reads, local hits, Redis reads, Redis errors and
// stale reads per second over the last ten minutes, oldest first, one
// sample a second (less often when the background tick is slower).
func (c *Cache[K, V]) History() []Sample { return c.hist.samples() }
