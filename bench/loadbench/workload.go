package main

import (
	"math/rand/v2"
	"time"
)

// Workload is one read/write mix, driven through every system in turn.
type Workload struct {
	ID       string // as -workloads takes it
	Name     string
	Duration time.Duration
	// Writes is the fraction of operations that write (bumping Version).
	Writes float64
	// Crowd, when set, sends part of the reads to a small set of keys that
	// changes every period.
	Crowd *FlashCrowd
}

// FlashCrowd makes Size keys take Share of all reads for Every, then
// cool, while another Size keys take their place: a story going viral,
// then the next. The rest of the reads keep the Zipfian background.
type FlashCrowd struct {
	Every time.Duration
	Size  int
	Share float64
	Keys  int64
	Seed  uint64
}

// Phase is the crowd's number at elapsed time since the start.
func (f *FlashCrowd) Phase(elapsed time.Duration) int { return int(elapsed / f.Every) }

// Members returns the keys of phase p's crowd: drawn from the colder 90% of
// the key space, so the crowd is new traffic and not keys already hot under
// the Zipfian background, and the same for every system.
func (f *FlashCrowd) Members(p int) []int64 {
	r := rand.New(rand.NewPCG(f.Seed, uint64(p)))
	out := make([]int64, 0, f.Size)
	for len(out) < f.Size {
		k := f.Keys/10 + r.Int64N(f.Keys-f.Keys/10)
		dup := false
		for _, o := range out {
			dup = dup || o == k
		}
		if !dup {
			out = append(out, k)
		}
	}
	return out
}

// picker chooses each operation of one worker; it is not shared.
type picker struct {
	w     *Workload
	zipf  *Zipf
	r     *rand.Rand
	start time.Time
	phase int
	crowd []int64
}

func newPicker(w *Workload, z *Zipf, seed uint64, worker int, start time.Time) *picker {
	p := &picker{w: w, zipf: z, r: rand.New(rand.NewPCG(seed, uint64(worker)+1)), start: start, phase: -1}
	return p
}

// next returns the key of the next operation, and whether it writes.
// now is the time the caller already took for its latency figures.
func (p *picker) next(now time.Time) (id int64, write bool) {
	write = p.w.Writes > 0 && p.r.Float64() < p.w.Writes
	if c := p.w.Crowd; c != nil {
		if ph := c.Phase(now.Sub(p.start)); ph != p.phase {
			p.phase, p.crowd = ph, c.Members(ph)
		}
		if p.r.Float64() < c.Share {
			return p.crowd[p.r.IntN(len(p.crowd))], write
		}
	}
	return p.zipf.Next(p.r), write
}
