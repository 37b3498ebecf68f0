// Package profile exercises every kind of field a clone function handles.
package profile

import (
	"time"

	"github.com/hotkeygen/hotkeygen/internal/golden/testdata/clone_deep/geo"
)

// Profile holds one field of each kind.
//
//hotkey:cache key=profile:{ID}
type Profile struct {
	ID     int64
	Name   string
	Tags   []string            // a slice of immutable values
	Scores map[string]int      // a map of immutable values
	Best   *int                // a pointer to an immutable value
	Home   Address             // a struct that needs copying
	Work   *Address            // a pointer to one
	Past   []Address           // a slice of them
	ByName map[string]*Address // a map of pointers to them
	Grid   [2][]int            // an array of slices
	Matrix [][]float64         // a slice of slices
	Groups map[string][]string // a map of slices
	At     Point               // a struct whose plain copy is deep
	Since  time.Time           // immutable, from another package
	Every  time.Duration
	Zone   *time.Location // shared by design
	Prefs  struct {       // a struct without a name
		Flags []bool
		Level int
	}
	Office   geo.Place           // another package's struct with a private map
	Labels   Labels              // a named slice type
	Pair     Pair[string, []int] // an instance of a generic type
	Extra    any                 // an interface: copied shallowly
	OnChange func()              `msgpack:"-"` // a function: copied shallowly, never stored
	Updates  chan int            `msgpack:"-"` // a channel: copied shallowly, never stored
	Embedded                     // an embedded struct with a slice
	secret   []byte              // our own unexported field: copied
}

// Address is a postal address.
type Address struct {
	Street string
	Lines  []string
	Geo    *Point
}

// Point is a position.
type Point struct{ Lat, Lng float64 }

// Labels are free-form labels.
type Labels []string

// Pair is a generic key and value.
type Pair[K comparable, V any] struct {
	Key   K
	Value V
}

// Embedded is embedded in Profile.
type Embedded struct{ Notes []string }
