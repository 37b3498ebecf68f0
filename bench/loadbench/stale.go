package main

import (
	"sync"
	"sync/atomic"
	"time"
)

// Staleness decides which reads returned a value older than a write that
// had already been acknowledged when the read began. Writes of one key are
// serialised and numbered 1, 2, 3… (the preloaded value is version 0), so
// Redis applies them in version order and "newer" is a plain comparison.
//
// The read path costs one atomic load per read (Before), and Observe does
// real work only for a read that is stale: the harness must not slow down
// the systems it measures.
type Staleness struct {
	epoch  time.Time
	bound  time.Duration
	latest []atomic.Int64 // per key: highest acknowledged version
	next   []int64        // per key: the version the next write takes; under writeMu
	// writeMu serialises writes per key (striped), so that versions reach
	// Redis in order.
	writeMu [256]sync.Mutex
	// acks holds when each version was acknowledged, keyed by ackKey, in
	// nanoseconds since epoch. Written before latest, so a reader that saw
	// a version in latest finds its time here.
	acks sync.Map

	stale, beyond atomic.Uint64
	longest       atomic.Int64 // nanoseconds
}

type ackKey struct{ id, version int64 }

// NewStaleness tracks keys 0..n-1; a stale read older than bound counts as
// beyond it (a system with invalidation promises staleness below its
// invalidation delay, not none).
func NewStaleness(n int64, bound time.Duration) *Staleness {
	return &Staleness{epoch: time.Now(), bound: bound, latest: make([]atomic.Int64, n), next: make([]int64, n)}
}

// Before returns the newest version of id acknowledged so far. Call it
// just before the read starts, and pass the result to Observe.
func (s *Staleness) Before(id int64) int64 { return s.latest[id].Load() }

// Observe records a read of id that started at start, after version
// acked had been acknowledged, and returned version got.
func (s *Staleness) Observe(id, acked, got int64, start time.Time) {
	if got >= acked {
		return
	}
	// Stale since the first version after got was acknowledged (a version
	// whose write failed has no time, and the next one stands for it).
	var at any
	for v := got + 1; v <= acked && at == nil; v++ {
		at, _ = s.acks.Load(ackKey{id, v})
	}
	if at == nil {
		return // cannot happen: acked was published after its time
	}
	age := int64(start.Sub(s.epoch)) - at.(int64)
	s.stale.Add(1)
	if age > int64(s.bound) {
		s.beyond.Add(1)
	}
	for {
		cur := s.longest.Load()
		if age <= cur || s.longest.CompareAndSwap(cur, age) {
			break
		}
	}
}

// Write gives id its next version, writes it with write, and on success
// records when it was acknowledged. Writes of one key never overlap.
func (s *Staleness) Write(id int64, write func(version int64) error) error {
	mu := &s.writeMu[id%int64(len(s.writeMu))]
	mu.Lock()
	defer mu.Unlock()
	v := s.next[id] + 1
	if err := write(v); err != nil {
		// The write may still have landed; the next write supersedes it
		// with a higher version either way.
		s.next[id] = v
		return err
	}
	s.next[id] = v
	s.acks.Store(ackKey{id, v}, int64(time.Since(s.epoch)))
	s.latest[id].Store(v)
	return nil
}

// StaleCounts returns the stale reads, those stale for longer than the
// bound, and the longest staleness seen.
func (s *Staleness) StaleCounts() (stale, beyond uint64, longest time.Duration) {
	return s.stale.Load(), s.beyond.Load(), time.Duration(s.longest.Load())
}
