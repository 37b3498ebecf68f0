// Package shop changes Product in ways the build generated from the
// recorded shape still reads: Color is dropped, Stock added, Name renamed
// in Go under its msgpack key, Code a string where it was bytes (both
// decoders read both), and the codec changed. ID was recorded before
// numbers had widths, and before pointers were marked.
package shop

import "time"

//go:generate hotkeygen

// Product is cached.
//
//hotkey:cache key=product:{ID} codec=reflect
type Product struct {
	ID    int64
	Title string `msgpack:"Name"`
	Stock int64
	Code  string
	Seen  *time.Time // a pointer then too, which the record did not say
}
