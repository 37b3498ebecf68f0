package background

import "time"

// Ticker is what Every needs of a clock: config.Clock is one.
type Ticker interface {
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

// Every calls f at each tick of a ticker of clock with period d, until
// done is closed. f runs on the loop's goroutine, so a slow f delays the
// next call rather than overlapping it. The background loops (the Cache's
// tick, the sync worker) share it, so each says only what it does on a
// tick.
func Every(clock Ticker, d time.Duration, done <-chan struct{}, f func()) {
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
