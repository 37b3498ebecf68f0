package main

//go:generate go run github.com/hotkeygen/hotkeygen/cmd/hotkeygen

// Item is the value every system under test reads and writes: the same
// msgpack bytes under the same keys, item:{ID}, so the systems differ only
// in how they cache. Version is bumped by every write, which is how the
// harness tells a stale read from a fresh one.
//
// The thresholds fit the benchmark's load (see BENCHMARKS.md, "Against the
// peers"): every cache gets 200 local entries, so top_n uses them all, and
// hot_qps is about the rate of the 200th key of the Zipfian load at the
// throughput a 2-core machine reaches, so the keys that earn a local copy
// are the ones the budget can hold.
//
//hotkey:cache key=item:{ID} ttl=1h hot_qps=50 warm_qps=10 top_n=200 demote_every=2s
type Item struct {
	ID      int64
	Version int64
	Payload string
}
