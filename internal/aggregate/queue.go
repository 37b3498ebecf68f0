package aggregate

import "sync"

// Queue holds a replica's slots that ended and are not reported yet,
// oldest first: a report that waits on Redis holds up the next ones,
// which wait here rather than being lost. Past Slots of them the oldest
// is dropped: it lies outside every window still to be read. The tick
// adds to it, and the report's job takes from it, each on its own
// goroutine.
type Queue struct {
	mu      sync.Mutex
	pending []Ended
}

// Ended is a slot that ended, and the entity's reads in it: what the
// replica reports as TotalMember.
type Ended struct {
	Slot  int64
	Reads uint64
}

// Add adds e to the slots to report.
func (q *Queue) Add(e Ended) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, e)
	if n := len(q.pending) - Slots; n > 0 {
		q.pending = append(q.pending[:0], q.pending[n:]...)
	}
}

// Take returns the slots to report, and empties the queue.
func (q *Queue) Take() []Ended {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pending
	q.pending = nil
	return p
}

// Waiting reports whether a slot waits to be reported.
func (q *Queue) Waiting() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) > 0
}
