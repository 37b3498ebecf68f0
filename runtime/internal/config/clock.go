package config

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

// Wall is the wall clock, the Clock of every program.
type Wall struct{}

func (Wall) Now() time.Time { return time.Now() }

func (Wall) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// ClockID identifies c to the transport, which shares a hub between
// repositories on one clock: nil for the wall clock.
func ClockID(c Clock) any {
	if _, wall := c.(Wall); wall {
		return nil
	}
	return c
}
