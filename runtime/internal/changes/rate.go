package changes

import (
	"sync"
	"time"
)

// rate measures ids synced per second over the last minute, from samples
// the worker takes after every step.
type rate struct {
	mu      sync.Mutex
	samples [rateSamples]rateSample
	n       int // samples taken
}

type rateSample struct {
	at    time.Time
	total uint64
}

const rateSamples = 32

func (r *rate) add(at time.Time, total uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > 1 && at.Sub(r.samples[(r.n-2)%rateSamples].at) < time.Second {
		// Within a second of the sample before the newest: the newest
		// moves on, so samples stay a second apart and span a minute.
		r.samples[(r.n-1)%rateSamples] = rateSample{at, total}
		return
	}
	r.samples[r.n%rateSamples] = rateSample{at, total}
	r.n++
}

// perSec is the rate between the oldest sample of the last minute and the
// newest.
func (r *rate) perSec() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n < 2 {
		return 0
	}
	last := r.samples[(r.n-1)%rateSamples]
	first := last
	for i := r.n - 2; i >= max(0, r.n-rateSamples); i-- {
		s := r.samples[i%rateSamples]
		if last.at.Sub(s.at) > time.Minute {
			break
		}
		first = s
	}
	if d := last.at.Sub(first.at).Seconds(); d > 0 {
		return float64(last.total-first.total) / d
	}
	return 0
}
