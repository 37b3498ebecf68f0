package runtime

import (
	"sync"
	"time"
)

// HistoryLen is how many samples History keeps: ten minutes at one a
// second, enough for a chart of what just happened, bounded whatever the
// uptime.
const HistoryLen = 600

// Sample is the traffic of one interval (about a second) of a Cache.
type Sample struct {
	At         time.Time // end of the interval
	Reads      float64   // reads per second
	Hits       float64   // reads per second served locally
	RedisReads float64   // reads per second that went to Redis
}

// history keeps the read and hit totals at one-second marks in a ring; the
// background tick adds to it, so keeping it costs the read path nothing.
type history struct {
	mu     sync.Mutex
	totals [HistoryLen + 1]total // one more than the samples: rates are deltas
	n      int                   // totals held
	next   int                   // where the next total goes
}

type total struct {
	at         time.Time
	reads, hit uint64
}

// add records the totals at now, unless the last mark is less than a
// second old.
func (h *history) add(now time.Time, reads, hits uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n > 0 && now.Sub(h.at(h.n-1).at) < time.Second {
		return
	}
	h.totals[h.next] = total{at: now, reads: reads, hit: hits}
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
		reads := float64(t.reads-prev.reads) / sec
		hits := float64(t.hit-prev.hit) / sec
		out = append(out, Sample{At: t.at, Reads: reads, Hits: hits, RedisReads: reads - hits})
		prev = t
	}
	return out
}

// History returns the reads, local hits and Redis reads per second over the
// last ten minutes, oldest first, one sample a second (less often when the
// background tick is slower).
func (c *Cache[K, V]) History() []Sample { return c.hist.samples() }
