// Package rates keeps the history of a Cache's traffic: the totals of its
// counters at one-second marks, in a ring of bounded length, turned into
// rates per second when asked. It needs no key or value type, and knows
// nothing of what the counters count beyond their names; the runtime's
// History returns its rates as Samples.
package rates

import (
	"sync"
	"time"
)

// History keeps the counters' totals at one-second marks in a ring; the
// background tick adds to it, so keeping it costs the read path nothing.
type History struct {
	mu     sync.Mutex
	totals []Totals // one more than the samples: rates are deltas
	n      int      // totals held
	next   int      // where the next total goes
}

// New returns a history of the last samples intervals.
func New(samples int) *History { return &History{totals: make([]Totals, samples+1)} }

// Add records the totals t at t.At, unless the last mark is less than a
// second old.
func (h *History) Add(t Totals) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n > 0 && t.At.Sub(h.at(h.n-1).At) < time.Second {
		return
	}
	h.totals[h.next] = t
	h.next = (h.next + 1) % len(h.totals)
	h.n = min(h.n+1, len(h.totals))
}

// at returns the i-th total held, oldest first; h.mu is held.
func (h *History) at(i int) Totals {
	return h.totals[(h.next-h.n+i+len(h.totals))%len(h.totals)]
}

// Rates returns the rates of each interval between two marks held,
// oldest first; nil before there are two.
func (h *History) Rates() []Rate {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n < 2 {
		return nil
	}
	out := make([]Rate, 0, h.n-1)
	prev := h.at(0)
	for i := 1; i < h.n; i++ {
		t := h.at(i)
		sec := t.At.Sub(prev.At).Seconds()
		rate := func(now, before uint64) float64 { return float64(now-before) / sec }
		reads, hits := rate(t.Reads, prev.Reads), rate(t.Hits, prev.Hits)
		out = append(out, Rate{
			At: t.At, Reads: reads, Hits: hits, RedisReads: reads - hits,
			RedisErrors: rate(t.Errs, prev.Errs), StaleReads: rate(t.Stales, prev.Stales),
		})
		prev = t
	}
	return out
}
