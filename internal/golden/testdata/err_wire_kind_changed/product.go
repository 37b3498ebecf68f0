// Package shop changes the kinds of Product's fields under the same
// version: the build generated from the recorded shape cannot read them.
package shop

import "time"

// Point was a map.
type Point struct{ X, Y int32 }

// Product is cached.
//
//hotkey:cache key=product:{ID}
type Product struct {
	ID      int64
	Name    string
	Tags    []string
	Stock   string    // was an int
	Where   Point     // was a map
	Updated int64     // was a time
	Seen    time.Time // new, and fine
	Ratio   float64   // was a float32: the running build rounds the new one's values
	Count   uint8     // was an int64: -5 reads as 251, 1<<8 as 0
	Sizes   []int     // was a []str
	Code    string    // was a []byte: both decoders read both, fine
	Parts   []Part
	Index   map[string]Part // was keyed by int: one error, at Index, for it and its Qty
}

// Part is a struct in a slice.
type Part struct {
	SKU string
	Qty float64 // was an int
}
