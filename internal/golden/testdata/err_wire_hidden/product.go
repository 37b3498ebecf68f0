// Package shop makes changes no kind label shows, each of which a running
// build reads wrong: Product was Catalog in Go (its record is found by its
// key template, and judged as before), Updated may be nil now where the
// running build's time decoder fails on a nil, and W and H of Dims, which
// msgpack writes as an array, trade places (their values would swap), as
// do the tags of Min and Max.
package shop

import "time"

// Dims is written as an array: a field is its place.
type Dims struct {
	_msgpack struct{} `msgpack:",as_array"`
	W, H     int32    // were H, W
	D        int32
}

// Product was Catalog.
//
//hotkey:cache key=product:{ID}
type Product struct {
	ID      int64
	Updated *time.Time // was a time.Time
	Size    Dims
	Min     int64 `msgpack:"max"` // the tags swapped
	Max     int64 `msgpack:"min"`
}
