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

// every calls f at each tick of a ticker of clock with period d, until
// done is closed. f runs on the loop's goroutine, so a slow f delays the
// next call rather than overlapping it. The background loops (the Cache's
// tick, the sync worker) share it, so each says only what it does on a
// tick.
func every(clock Clock, d time.Duration, done <-chan struct{}, f func()) {
	ticks, stop := clock.NewTicker(d)
	defer stop()
	for {
		select {
		case <-done:
			return
		case <-ticks:
			f()
		}
	}
}

// clockID identifies c to the transport, which shares a hub between
// repositories on one clock: nil for the wall clock.
func clockID(c Clock) any {
	if _, wall := c.(wallClock); wall {
		return nil
	}
	return c
}
