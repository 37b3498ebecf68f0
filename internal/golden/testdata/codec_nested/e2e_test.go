package shop

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go: the nested structs' functions
// write what msgpack's reflection writes and read what it reads.

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/golden/testdata/codec_nested/geo"
)

// plainOrder and plainCustomer are the entities without the generated
// methods; Customer, a field of Order, still encodes itself through them,
// byte for byte as reflection would.
type (
	plainOrder    Order
	plainCustomer Customer
)

// sample has one entry in each map, so that reflection, which writes map
// entries in random order, writes the same bytes every time, and its time
// in the local time zone, in which msgpack reads one back.
func sample() *Order {
	note := &Note{Text: "gift", At: time.Unix(1700000000, 5)}
	return &Order{
		ID:      7,
		Ship:    Address{Street: "1 Main St", Lines: []string{"floor 2"}, At: &Point{1.5, -2}},
		Bill:    &Address{Street: "2 Side St"},
		Lines:   []Line{{SKU: "a", Qty: 1, Note: note}, {SKU: "b", Qty: -2}},
		ByCode:  map[string]Line{"c": {SKU: "c", Qty: 3, Note: note}},
		Batches: [][]Line{{{SKU: "d"}}, nil, {}},
		Where:   Point{3, 4},
		Grid:    geo.Point{X: -5, Y: 6},
		Near:    GeoPoint{Label: "park"},
		Pins:    map[string]*geo.Point{"x": {X: 1}},
		Buyer:   Customer{ID: "ada", Home: Address{Street: "3 High St"}},
	}
}

func TestNestedStructsWriteWhatReflectionWrites(t *testing.T) {
	for name, o := range map[string]*Order{"sample": sample(), "zero": {}, "nil pointers": {Pins: map[string]*geo.Point{"n": nil}, Lines: []Line{{}}}} {
		gen, err := o.AppendMsgpack(nil)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := msgpack.Marshal((*plainOrder)(o))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gen, plain) {
			t.Errorf("%s:\ngenerated  % x\nreflection % x", name, gen, plain)
		}
		var back Order
		if err := back.ReadMsgpack(plain); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var viaReflect plainOrder
		if err := msgpack.Unmarshal(gen, &viaReflect); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(&back, o) || !reflect.DeepEqual((*Order)(&viaReflect), o) {
			t.Errorf("%s: round trip: generated %+v, reflection %+v, want %+v", name, back, viaReflect, *o)
		}
	}
}

func TestNestedStructsReadArrays(t *testing.T) {
	o := sample()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseArrayEncodedStructs(true)
	if err := enc.Encode((*plainOrder)(o)); err != nil {
		t.Fatal(err)
	}
	var back Order
	if err := back.ReadMsgpack(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	// Customer encodes itself, as a map; everything else is an array.
	if !reflect.DeepEqual(&back, o) {
		t.Fatalf("read %+v, want %+v", back, *o)
	}
}

// TestAnEntityNestedInAnotherReadsAsItself: Customer's own methods and
// Order's field of its type write the same bytes, through one function.
func TestAnEntityNestedInAnotherReadsAsItself(t *testing.T) {
	c := &sample().Buyer
	own, err := c.AppendMsgpack(nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := msgpack.Marshal((*plainCustomer)(c))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(own, plain) {
		t.Fatalf("generated % x\nreflection % x", own, plain)
	}
	var back Customer
	if err := back.ReadMsgpack(own); err != nil || !reflect.DeepEqual(&back, c) {
		t.Fatalf("read %+v (%v), want %+v", back, err, *c)
	}
}

// TestCutShortFailsAtEveryByte: a value cut anywhere in a nested struct is
// an error, never a panic or a value.
func TestCutShortFailsAtEveryByte(t *testing.T) {
	b, err := sample().AppendMsgpack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		var o Order
		if err := o.ReadMsgpack(b[:n]); err == nil {
			t.Fatalf("%d of %d bytes read without an error", n, len(b))
		}
	}
}
