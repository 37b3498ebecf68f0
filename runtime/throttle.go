package runtime

import (
	"sync"
	"time"
)

// logThrottle spaces the log lines of one kind of failure, which may
// come once per call while Redis fails: the first is written, then at
// most one an interval, each saying how many went unlogged before it.
type logThrottle struct {
	mu         sync.Mutex
	next       time.Time
	suppressed int
}

// allow reports whether a line may be written at now, the last having
// been written at least every before, and how many were not since.
func (t *logThrottle) allow(now time.Time, every time.Duration) (unlogged int, ok bool) {
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
