// Package throttle spaces the log lines of failures that may come once
// per call, or once per key, while Redis fails or a program misbehaves:
// the lines of one kind (Lines), and the warnings about one key (Keys).
// It needs no key or value type, only names and times, and so is tested
// here alone.
package throttle

import (
	"sync"
	"time"
)

// Lines spaces the log lines of one kind of failure, which may come once
// per call while Redis fails: the first is written, then at most one an
// interval, each saying how many went unlogged before it.
type Lines struct {
	mu         sync.Mutex
	next       time.Time
	suppressed int
}

// Allow reports whether a line may be written at now, the last having
// been written at least every before, and how many were not since.
func (t *Lines) Allow(now time.Time, every time.Duration) (unlogged int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Before(t.next) {
		t.suppressed++
		return 0, false
	}
	unlogged = t.suppressed
	t.next, t.suppressed = now.Add(every), 0
	return unlogged, true
}
