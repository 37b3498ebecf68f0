// Package wiretest provides msgpack values that attack a decoder, for the
// tests of every path that decodes bytes read from Redis: headers that
// declare more than the value holds, in every form of every kind; values
// cut short; nesting deeper than wire.MaxDepth; a byte msgpack never uses.
// A decoder must refuse each with an error, without a panic and without
// allocating from the length the value claims.
package wiretest

import (
	"bytes"
	"fmt"
	"runtime"

	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// Value is one hostile value.
type Value struct {
	Name  string // what the value is, as a test names it
	Bytes []byte
}

// Hostile returns the hostile values: ones found to break decoders
// (the 13-byte value that made msgpack's reflection allocate gigabytes,
// nesting that overflowed its stack) and their neighbours.
func Hostile() []Value {
	vs := []Value{
		{"empty input", nil},
		{"0xc1, the code msgpack never uses", []byte{0xc1}},
		{"0xc1 after a map header", []byte{0x81, 0xc1, 0xc0}},
		// A map16 of 56,667 pairs whose first key is a bin32 of 4 GiB:
		// msgpack's reflection grew a buffer toward 4 GiB on each read.
		{"the 13-byte value", []byte{0xde, 0xdd, 0x5b, 0xc6, 0xff, 0x3f, 0x4a, 0x66, 0x70, 0x05, 0x25, 0xfc, 0xec}},
		{"fixmap cut short", []byte{0x82, 0xa1, 'a', 0x01}},
		{"fixarray cut short", []byte{0x93, 0x01}},
		{"fixstr cut short", []byte{0xa5, 'a', 'b'}},
		{"float64 cut short", []byte{0xcb, 0x40}},
		{"uint64 cut short", []byte{0xcf, 0, 0, 0}},
		{"fixext8 cut short", []byte{0xd7, 0xff, 0, 0}},
	}
	// Every form of every kind with a length: the header alone cut
	// short, a length one byte longer than what follows, and the largest
	// length the form can declare.
	for _, k := range []struct {
		name  string
		code  byte
		width int // bytes of the length
		ext   bool
	}{
		{"str8", 0xd9, 1, false}, {"str16", 0xda, 2, false}, {"str32", 0xdb, 4, false},
		{"bin8", 0xc4, 1, false}, {"bin16", 0xc5, 2, false}, {"bin32", 0xc6, 4, false},
		{"ext8", 0xc7, 1, true}, {"ext16", 0xc8, 2, true}, {"ext32", 0xc9, 4, true},
		{"array16", 0xdc, 2, false}, {"array32", 0xdd, 4, false},
		{"map16", 0xde, 2, false}, {"map32", 0xdf, 4, false},
	} {
		body := []byte("abc")
		header := func(n uint64) []byte {
			h := []byte{k.code}
			for i := k.width - 1; i >= 0; i-- {
				h = append(h, byte(n>>(8*i)))
			}
			if k.ext {
				h = append(h, 0x05) // the extension's type
			}
			return h
		}
		vs = append(vs,
			Value{k.name + " header cut short", header(1)[:k.width]},
			Value{k.name + " one byte longer than its value", append(header(uint64(len(body)+1)), body...)},
			Value{k.name + " of the largest length", append(header(1<<(8*k.width)-1), body...)},
		)
	}
	vs = append(vs,
		// Twice the limit: deeper than it wherever a decoder starts
		// counting (a struct's decoder reads the outer levels itself).
		Value{fmt.Sprintf("arrays nested %d deep", 2*wire.MaxDepth), Nested(2 * wire.MaxDepth)},
		Value{fmt.Sprintf("maps nested %d deep", 2*wire.MaxDepth), nestedMaps(2 * wire.MaxDepth)},
		Value{"1 MiB of nested arrays", Nested(1 << 20)},
		Value{"a 4 GiB string inside nested arrays", append(bytes.Repeat([]byte{0x91}, 100), 0xdb, 0xff, 0xff, 0xff, 0xff, 'a')},
	)
	return vs
}

// Nested returns depth one-element arrays, each inside the last, around
// a nil: a value of that depth and about that many bytes.
func Nested(depth int) []byte {
	return append(bytes.Repeat([]byte{0x91}, depth), 0xc0)
}

// nestedMaps returns depth one-pair maps, each the value of key "" in the
// last, around a nil.
func nestedMaps(depth int) []byte {
	return append(bytes.Repeat([]byte{0x81, 0xa0}, depth), 0xc0)
}

// InField returns a map of one pair, key and the value v: how a hostile
// value reaches the decoder of one field of a struct.
func InField(key string, v []byte) []byte {
	b := wire.AppendMapLen(nil, 1)
	b = wire.AppendString(b, key)
	return append(b, v...)
}

// Allocated returns the bytes f allocates, averaged over runs calls: what
// a test compares with the length of the value f decodes. It counts every
// goroutine's allocations, so a budget leaves room for background work.
func Allocated(runs int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}
