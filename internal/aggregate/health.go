package aggregate

import "sync"

// Health says whether a replica's last report or cluster read failed, so
// that a Redis outage, which fails them every slot, logs its first
// failure and its end, one line each.
type Health struct {
	mu      sync.Mutex
	failing bool
}

// Failed records a failure, and reports whether it is the first since
// the last success.
func (h *Health) Failed() (first bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first = !h.failing
	h.failing = true
	return first
}

// Works records a success, and reports whether failures came before it.
func (h *Health) Works() (recovered bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	recovered = h.failing
	h.failing = false
	return recovered
}
