package rates

import "time"

// Rate is the traffic of one interval between two marks of a History,
// per second. Its fields are runtime.Sample's, in its order, so the
// runtime converts one to the other; see runtime.Sample for what each
// counts.
type Rate struct {
	At          time.Time // end of the interval
	Reads       float64
	Hits        float64
	RedisReads  float64 // Reads that were not Hits
	RedisErrors float64
	StaleReads  float64
}
