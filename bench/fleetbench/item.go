package main

//go:generate go run github.com/hotkeygen/hotkeygen/cmd/hotkeygen

// Item is what every instance holds and the writer writes: the same
// msgpack bytes under the same keys, item:{ID}, for every system.
//
// The options are the runtime's defaults (invalidate=tracking,
// refresh=10s, demote_every=60s, ...) but two. hot_qps=10 lets an
// instance come to hold its copies with a dozen reads of each key in one
// second, since a burst past hot_qps promotes at once: the benchmark
// measures what holding copies costs Redis, not what reaching 3000
// reads/s of one key does. top_n=10 is the default, written out because
// the scenarios read exactly that many keys (heldKeys).
//
//hotkey:cache key=item:{ID} ttl=1h hot_qps=10 top_n=10
type Item struct {
	ID      int64
	Version int64
	Payload string
}
