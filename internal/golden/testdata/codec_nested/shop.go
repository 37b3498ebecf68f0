// Package shop nests structs in every way the generated codec handles:
// each named struct type gets one append and one read function, which the
// entities' methods and every value of its type call.
package shop

import (
	"time"

	"github.com/hotkeygen/hotkeygen/internal/golden/testdata/codec_nested/geo"
)

//go:generate hotkeygen

// Order holds nested structs by value, by pointer, in slices and in maps,
// another package's struct of the same name as one of its own, and
// another entity.
//
//hotkey:cache key=order:{ID}
type Order struct {
	ID      int64
	Ship    Address
	Bill    *Address `msgpack:",omitempty"`
	Lines   []Line
	ByCode  map[string]Line
	Batches [][]Line
	Where   Point
	Grid    geo.Point
	Near    GeoPoint
	Pins    map[string]*geo.Point
	Buyer   Customer
}

// Customer is an entity of its own, and a field of Order: its type has one
// pair of functions, which both use.
//
//hotkey:cache key=customer:{ID}
type Customer struct {
	ID   string
	Home Address
}

// Address is held by both entities.
type Address struct {
	Street string
	Lines  []string
	At     *Point
}

// Line is an order line. The package declares readMsgpackLine, so its
// functions are numbered.
type Line struct {
	SKU  string
	Qty  int
	Note *Note
}

// Note is nested three levels deep.
type Note struct {
	Text string
	At   time.Time
}

// Point is a position; geo.Point is another.
type Point struct{ Lat, Lng float64 }

// GeoPoint has the name geo.Point's functions would take: theirs are
// numbered.
type GeoPoint struct{ Label string }

// readMsgpackLine is a name of the package's own.
func readMsgpackLine() {}

var _ = readMsgpackLine
