// Package model is the entity the fault-injection checker (internal/testing/soak)
// reads and writes: a version per id, so every read says which write it
// saw. It is the checker's own, apart from the example's, so the example
// can change without changing what the checker measures.
package model

//go:generate go run github.com/hotkeygen/hotkeygen/cmd/hotkeygen

// Record holds the version of id the last write stored.
//
//hotkey:cache key=soak:{ID} ttl=30m hot_qps=500 warm_qps=100 top_n=10
type Record struct {
	ID      int64
	Version int64
}
