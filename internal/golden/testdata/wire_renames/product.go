// Package shop changes Product in ways a running build reads, each said
// without -v: Colour is Color renamed in Go without a tag (each build
// reads the other's as empty), Stock may be nil now (the running build
// reads a nil as 0), and Price was Cents, a type that encoded itself as
// the int64 it now is (which no record can check).
package shop

//go:generate hotkeygen

// Product is cached.
//
//hotkey:cache key=product:{ID}
type Product struct {
	ID     int64
	Colour string // was Color
	Stock  *int64 // was an int64
	Price  int64  // was a Cents
}
