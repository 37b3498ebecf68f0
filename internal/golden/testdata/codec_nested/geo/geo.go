// Package geo has a struct named as one of package shop's: each gets a
// codec function pair of its own.
package geo

// Point is a position on a grid.
type Point struct {
	X, Y int32
}
