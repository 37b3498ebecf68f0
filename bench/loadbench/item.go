package main

//go:generate go run github.com/hotkeygen/hotkeygen/cmd/hotkeygen

// Item is the value every system under test reads and writes: the same
// msgpack bytes under the same keys, item:{ID}, so the systems differ only
// in how they cache. Version is bumped by every write, which is how the
// harness tells a stale read from a fresh one.
//
// The thresholds fit the benchmark's load, as a user would set them (see
// BENCHMARKS.md, "Against the peers"). Every cache gets 200 local
// entries, so top_n may use them all. Under the Zipfian load (theta 0.99,
// 100,000 keys) the key of rank r takes 7.8%/r^0.99 of the reads, so at
// the 100,000-odd reads/s two cores reach, hot_qps=50 promotes the top
// 150 or so: nearly the whole budget, with room left in top_n for a flash
// crowd, which a full hot set would make wait for the next detection slot.
// warm_qps=10 keeps keys near the threshold from flapping, and
// demote_every=2s lets a cooled crowd go about one window (10 s) after it
// cooled rather than up to a minute later.
//
//hotkey:cache key=item:{ID} ttl=1h hot_qps=50 warm_qps=10 top_n=200 demote_every=2s
type Item struct {
	ID      int64
	Version int64
	Payload string
}
