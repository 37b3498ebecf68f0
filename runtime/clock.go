package runtime

import "time"

// Clock is the source of time for detection windows and background ticks.
// Tests inject a manual clock so time-based behaviour is checked without
// sleeping.
type Clock interface {
	Now() time.Time
	// NewTicker returns a channel that delivers the time every d, and a
	// function that stops it.
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// clockID identifies c to the transport, which shares a hub between
// repositories on one clock: nil for the wall clock.
func clockID(c Clock) any {
	if _, wall := c.(wallClock); wall {
		return nil
	}
	return c
}
