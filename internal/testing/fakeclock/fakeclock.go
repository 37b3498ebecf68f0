// Package fakeclock provides a manual clock for tests of time-based logic.
//
// Time moves only when the test calls Advance or Set. Tickers made by the
// clock never fire on their own: a test drives background work by calling
// the code under test with the clock's time, which keeps every step
// deterministic and free of sleeps.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a manual clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock set to start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// NewTicker returns a ticker that never fires; see the package comment.
func (c *Clock) NewTicker(time.Duration) (<-chan time.Time, func()) {
	return nil, func() {}
}
