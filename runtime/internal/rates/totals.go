package rates

import "time"

// Totals is the counters a History follows, at one mark.
type Totals struct {
	At                        time.Time
	Reads, Hits, Errs, Stales uint64
}
