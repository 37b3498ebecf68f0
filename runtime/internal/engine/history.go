package engine

import "time"

// HistoryLen is how many samples History keeps: ten minutes at one a
// second, enough for a chart of what just happened, bounded whatever the
// uptime.
const HistoryLen = 600

// Sample is the traffic of one interval (about a second) of a Cache: the
// differences of its counters between two marks of the background tick,
// per second.
type Sample struct {
	At         time.Time // end of the interval
	Reads      float64   // reads per second
	Hits       float64   // reads per second served locally
	RedisReads float64   // reads per second that went to Redis
	// RedisErrors are the Redis commands that failed, and the calls
	// refused without asking Redis because it was unreachable, per second:
	// Stats.RedisErrors plus Stats.FailedFast.
	RedisErrors float64
	// StaleReads are the reads per second answered from a local copy no
	// live invalidation session vouched for (Stats.StaleReads).
	StaleReads float64
}
