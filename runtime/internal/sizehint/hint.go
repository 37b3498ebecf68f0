// Package sizehint says how large a buffer an encoding starts with, from
// the sizes of the values encoded last. The runtime's codec encodes into
// a buffer of its own each time (go-redis may hold it after a call
// returns), so a good first capacity is the difference between one
// allocation and several; it needs no value type, only sizes, so it is
// tested here alone.
package sizehint

import "sync/atomic"

// Min is the smallest buffer an encoding starts with.
const Min = 64

// Hint is the capacity the next encoding starts with (Cap), following
// the sizes of the last two values encoded (Saw). Its zero value is
// ready, and it is safe for concurrent use.
type Hint struct {
	// hint is the capacity the next encoding starts with, 0 before the
	// first (Min), and last the size of the last value encoded.
	hint, last atomic.Int64
}

// Cap returns the capacity to start the next encoding with.
func (h *Hint) Cap() int64 {
	if c := h.hint.Load(); c > 0 {
		return c
	}
	return Min
}

// Saw records an encoding of n bytes.
func (h *Hint) Saw(n int64) { h.hint.Store(next(h.last.Swap(n), n)) }

// next is the buffer to start the next encoding with, after values of
// prev and then n bytes: room for the smaller of the two with a quarter to
// spare, so that sizes varying a little do not grow the buffer again. One
// huge value among small ones moves it not at all, and a small write
// costs what a small write costs (shrinking by quarters, 200 writes of 12
// bytes after one of 4 MiB allocated 6.8 MB); values that stay large move
// it on the second, and the one before grows its buffer as append does.
func next(prev, n int64) int64 {
	m := min(prev, n)
	return max(m+m/4, Min)
}
