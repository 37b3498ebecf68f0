package background

import "time"

// Interval is the timing of one periodic job of a Schedule: how often it
// runs (0 or less: never), and when it is next due.
type Interval struct {
	every time.Duration
	next  time.Time
}
