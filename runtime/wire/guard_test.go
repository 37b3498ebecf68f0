package wire_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime/wire"
	"github.com/hotkeygen/hotkeygen/runtime/wire/wiretest"
)

// refusalBudget is what refusing a value of n bytes may allocate: the
// error, and whatever was decoded before the fault, which the value's own
// bytes bound; never anything sized by a length the value declares.
func refusalBudget(n int) uint64 { return uint64(2*n) + 16<<10 }

// target is a struct with a field of every shape reflection fills.
type target struct {
	A any
	S string
	B []byte
	L []any
	M map[string]any
	T time.Time
	P *target
}

// Every decoder in this package refuses each hostile value with an error,
// neither panicking nor allocating from a length the value declares,
// whether the value is the whole input or one field of a struct.
func TestHostileValuesAreRefused(t *testing.T) {
	decoders := []struct {
		name   string
		decode func([]byte) error
	}{
		{"Skip", func(b []byte) error { _, err := wire.Skip(b); return err }},
		{"Unmarshal into any", func(b []byte) error { var v any; return wire.Unmarshal(b, &v) }},
		{"Unmarshal into a struct", func(b []byte) error { var v target; return wire.Unmarshal(b, &v) }},
		{"Unmarshal into []any", func(b []byte) error { var v []any; return wire.Unmarshal(b, &v) }},
		{"Unmarshal into map[string]any", func(b []byte) error { var v map[string]any; return wire.Unmarshal(b, &v) }},
		{"Unmarshal of the field A", func(b []byte) error { var v target; return wire.Unmarshal(wiretest.InField("A", b), &v) }},
		{"Unmarshal of the field L", func(b []byte) error { var v target; return wire.Unmarshal(wiretest.InField("L", b), &v) }},
		{"ReadValue into any", func(b []byte) error { var v any; _, err := wire.ReadValue(b, &v); return err }},
		{"ReadString", func(b []byte) error { _, _, err := wire.ReadString(b); return err }},
		{"ReadBytes", func(b []byte) error { _, _, err := wire.ReadBytes(b); return err }},
		{"ReadTime", func(b []byte) error { _, _, err := wire.ReadTime(b); return err }},
		{"ReadStructLen", func(b []byte) error {
			n, arr, rest, err := wire.ReadStructLen(b, 2)
			for ; err == nil && n > 0; n-- {
				if !arr {
					_, rest, err = wire.ReadStringBytes(rest)
				}
				if err == nil {
					rest, err = wire.Skip(rest)
				}
			}
			return err
		}},
	}
	for _, h := range wiretest.Hostile() {
		for _, d := range decoders {
			t.Run(h.Name+"/"+d.name, func(t *testing.T) {
				var err error
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("panic: %v", r)
						}
					}()
					err = d.decode(h.Bytes)
				}()
				if err == nil {
					t.Fatalf("% x accepted", head(h.Bytes))
				}
				if got, max := wiretest.Allocated(3, func() { _ = d.decode(h.Bytes) }), refusalBudget(len(h.Bytes)); got > max {
					t.Fatalf("refusing %d bytes allocated %d bytes, more than %d: %v", len(h.Bytes), got, max, err)
				}
			})
		}
	}
}

func head(b []byte) []byte { return b[:min(len(b), 16)] }

// Nesting up to MaxDepth reads as msgpack reads it; one level more is
// ErrTooDeep, for arrays and maps alike, however deep the value goes.
func TestNestingLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		b     []byte
		depth int
	}{
		{"arrays", wiretest.Nested(wire.MaxDepth), wire.MaxDepth},
		{"maps", append(bytes.Repeat([]byte{0x81, 0xa0}, wire.MaxDepth), 0xc0), wire.MaxDepth},
		{"arrays in a map", wiretest.InField("k", wiretest.Nested(wire.MaxDepth-1)), wire.MaxDepth},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got, want any
			if err := wire.Unmarshal(c.b, &got); err != nil {
				t.Fatalf("depth %d refused: %v", c.depth, err)
			}
			if err := msgpack.Unmarshal(c.b, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal("decoded differently from msgpack")
			}
			deeper := append(bytes.Repeat(c.b[:1], 1), c.b...)
			if c.b[0] == 0x81 {
				deeper = append([]byte{0x81, 0xa0}, c.b...)
			}
			if _, err := wire.Skip(deeper); !errors.Is(err, wire.ErrTooDeep) {
				t.Fatalf("depth %d: %v, want ErrTooDeep", c.depth+1, err)
			}
		})
	}
	// Nesting that closes and reopens never adds up: 1000 siblings, each
	// MaxDepth deep, are fine.
	sib := wire.AppendArrayLen(nil, 1000)
	for range 1000 {
		sib = append(sib, wiretest.Nested(wire.MaxDepth-1)...)
	}
	if rest, err := wire.Skip(sib); err != nil || len(rest) != 0 {
		t.Fatalf("siblings: %v, %d bytes left", err, len(rest))
	}
}

// Skip allocates nothing for values up to 16 levels deep, and a few small
// buffers for deeper ones.
func TestSkipAllocations(t *testing.T) {
	for depth, max := range map[int]float64{1: 0, 16: 0, wire.MaxDepth: 8} {
		b := wiretest.Nested(depth)
		if got := testing.AllocsPerRun(100, func() { _, _ = wire.Skip(b) }); got > max {
			t.Errorf("Skip of depth %d: %v allocations, want at most %v", depth, got, max)
		}
	}
}

// msgpack panics on some values that pass every length check, such as a
// map[any]any keyed by an array; Unmarshal and ReadValue return that as an
// error.
func TestPanicsInsideMsgpackAreErrors(t *testing.T) {
	for _, b := range [][]byte{{0x81, 0x90, 0xc0}, {0x81, 0x80, 0xc0}} {
		var m map[any]any
		if err := wire.Unmarshal(b, &m); err == nil {
			t.Errorf("Unmarshal(% x) into map[any]any: no error", b)
		}
		if _, err := wire.ReadValue(b, &m); err == nil {
			t.Errorf("ReadValue(% x) into map[any]any: no error", b)
		}
	}
}

// A struct written as an array of its fields (msgpack's
// UseArrayEncodedStructs, or the as_array tag option) has a header
// ReadStructLen reads as msgpack's reflection does.
func TestReadStructLen(t *testing.T) {
	for _, c := range []struct {
		b       []byte
		n       int
		asArray bool
		ok      bool
	}{
		{[]byte{0x82, 1, 2, 3, 4}, 2, false, true},
		{[]byte{0x80}, 0, false, true},
		{[]byte{0xc0}, -1, false, true},
		{[]byte{0x90}, -1, false, true}, // an empty array zeroes the struct
		{[]byte{0x93, 1, 2, 3}, 3, true, true},
		{[]byte{0xdc, 0, 3, 1, 2, 3}, 3, true, true},
		{[]byte{0x92, 1, 2}, 0, false, false}, // another number of fields
		{[]byte{0xa1, 'x'}, 0, false, false},
	} {
		n, asArray, _, err := wire.ReadStructLen(c.b, 3)
		if n != c.n || asArray != c.asArray || (err == nil) != c.ok {
			t.Errorf("ReadStructLen(% x, 3) = %d, %v, %v; want %d, %v, ok=%v", c.b, n, asArray, err, c.n, c.asArray, c.ok)
		}
	}
}

// BenchmarkSkipDeepNesting refuses 1 MiB of nested arrays, which cost
// msgpack's reflection 12 s of CPU before the limit.
func BenchmarkSkipDeepNesting(b *testing.B) {
	v := wiretest.Nested(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		var x any
		if err := wire.Unmarshal(v, &x); !errors.Is(err, wire.ErrTooDeep) {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshal measures the cost of the check Unmarshal makes
// before msgpack.Unmarshal, on a typical entity.
func BenchmarkUnmarshal(b *testing.B) {
	type user struct {
		ID    int64
		Name  string
		Email string
		Tags  []string
		Attrs map[string]any
	}
	data, err := msgpack.Marshal(&user{ID: 42, Name: "Ada", Email: "ada@example.com", Tags: []string{"admin", "beta"}, Attrs: map[string]any{"plan": "pro", "seats": 5}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    func([]byte, any) error
	}{{"msgpack", msgpack.Unmarshal}, {"checked", wire.Unmarshal}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var u user
				if err := c.f(data, &u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("Skip", func(b *testing.B) {
		for b.Loop() {
			if _, err := wire.Skip(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzUnmarshal feeds anything to the reflection path the runtime takes
// for codec=reflect entities and the fields the generated codec leaves to
// reflection: no panic, allocation bounded by the input's length, and,
// for what it accepts, the value msgpack itself decodes.
func FuzzUnmarshal(f *testing.F) {
	for _, v := range []any{target{A: []any{1, "x"}, S: "s", B: []byte{1}, M: map[string]any{"k": 1.5}, T: time.Unix(1, 2)}, map[string]any{"A": nil}, []any{}} {
		b, err := msgpack.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, h := range wiretest.Hostile() {
		if len(h.Bytes) < 1<<10 {
			f.Add(h.Bytes)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got target
		var err error
		// An any holds maps of one pair at about 160 bytes for each byte
		// of the value: the Go representation, not a declared length.
		if n, max := wiretest.Allocated(1, func() { got = target{}; err = wire.Unmarshal(b, &got) }), uint64(256*len(b))+64<<10; n > max {
			t.Fatalf("% x: allocated %d bytes, more than %d", head(b), n, max)
		}
		if _, skipErr := wire.Skip(b); skipErr != nil {
			if err == nil {
				t.Fatalf("% x: Skip refused it (%v) but Unmarshal took it", head(b), skipErr)
			}
			return // msgpack's own Unmarshal is not safe on such input
		}
		var want target
		wantErr := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%v", r)
				}
			}()
			return msgpack.Unmarshal(b, &want)
		}()
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("% x: Unmarshal %v, msgpack %v", head(b), err, wantErr)
		}
		if err == nil && !sameValue(got, want) {
			t.Fatalf("% x: Unmarshal %+v, msgpack %+v", head(b), got, want)
		}
	})
}

// sameValue reports whether a and b are deeply equal, NaN equal to NaN:
// the float a map holds may be NaN, which reflect.DeepEqual never finds
// equal to itself. Both sides are written by msgpack, map keys sorted,
// and the bytes compared: a NaN read from the same bytes writes the same
// bits back.
func sameValue(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	enc := func(v any) []byte {
		var buf bytes.Buffer
		e := msgpack.NewEncoder(&buf)
		e.SetSortMapKeys(true)
		if err := e.Encode(v); err != nil {
			return nil
		}
		return buf.Bytes()
	}
	x, y := enc(a), enc(b)
	return x != nil && bytes.Equal(x, y)
}
