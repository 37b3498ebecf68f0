package model

import "sync"

// Counter holds a lock, which must not be copied.
//
//hotkey:cache key=counter:{ID}
type Counter struct {
	ID int64
	mu sync.Mutex
	n  int
}
