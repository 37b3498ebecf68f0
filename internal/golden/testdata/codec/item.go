// Package codec checks the generated msgpack codec against msgpack's
// reflection, both ways, for every kind of field.
package codec

import (
	"log/slog"
	"time"
)

//go:generate hotkeygen

// Point is a nested struct: the codec writes and reads it with a pair of
// functions of its own, which Item's call.
type Point struct {
	X, Y int32
}

// Status is a named string: reflection encodes it, honouring any methods.
type Status string

// Item has a field of every kind the codec writes itself, and of the kinds
// it leaves to reflection, with msgpack tags that rename, omit and skip.
//
//hotkey:cache key=item:{ID}
type Item struct {
	ID     int64
	Name   string `msgpack:"name"`
	Nick   string `msgpack:"nick,omitempty"`
	Secret string `msgpack:"-"`
	hidden int
	Flag   bool `msgpack:",omitempty"`
	I      int
	I8     int8
	I16    int16
	I32    int32 `msgpack:"i32,omitempty"`
	U      uint
	U8     uint8
	U16    uint16
	U32    uint32
	U64    uint64 `msgpack:",omitempty"`
	F32    float32
	F64    float64 `msgpack:",omitempty"`
	Raw    []byte
	RawOpt []byte `msgpack:",omitempty"`
	Tags   []string
	Attrs  map[string]int `msgpack:",omitempty"`
	Where  Point
	Ptr    *Point `msgpack:",omitempty"`
	Opt    *int64
	At     time.Time
	AtOpt  time.Time `msgpack:",omitempty"`
	Status Status
	Any    any
	// Wait is a named type of another package, written natively; Level
	// has MarshalText, which msgpack honours, so it goes to reflection.
	Wait  time.Duration
	Level slog.Level
}

// Legacy keeps msgpack's reflection.
//
//hotkey:cache key=legacy:{ID} codec=reflect
type Legacy struct {
	ID   string
	Name string
}
