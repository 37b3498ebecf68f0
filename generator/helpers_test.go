package generator

import (
	"bytes"
	"go/types"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// typeOf is the reflect.Type of T.
func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// kindOfType is the wire kind the record gives a field of the Go type rt,
// a number, a string or a []byte, as shapeOf finds it through go/types.
func kindOfType(t *testing.T, rt reflect.Type) string {
	t.Helper()
	basic := map[reflect.Kind]types.BasicKind{
		reflect.Int: types.Int, reflect.Int8: types.Int8, reflect.Int16: types.Int16, reflect.Int32: types.Int32, reflect.Int64: types.Int64,
		reflect.Uint: types.Uint, reflect.Uint8: types.Uint8, reflect.Uint16: types.Uint16, reflect.Uint32: types.Uint32, reflect.Uint64: types.Uint64,
		reflect.Float32: types.Float32, reflect.Float64: types.Float64, reflect.String: types.String,
	}
	var gt types.Type
	switch {
	case rt.Kind() == reflect.Slice && rt.Elem().Kind() == reflect.Uint8:
		gt = types.NewSlice(types.Typ[types.Byte])
	default:
		k, ok := basic[rt.Kind()]
		if !ok {
			t.Fatalf("kindOfType: %v", rt)
		}
		gt = types.Typ[k]
	}
	kind, _, _, _ := wireKindOf(gt)
	return kind
}

// misreads reports whether a value at the edges of from, written by
// msgpack from a field of that type, reads back as another value in a
// field of type to: what a build whose field is to makes of a build's
// whose field is from.
func misreads(t *testing.T, from, to reflect.Type) bool {
	t.Helper()
	for _, v := range edges(from) {
		in := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "F", Type: from}})).Elem()
		in.Field(0).Set(v)
		b, err := msgpack.Marshal(in.Interface())
		if err != nil {
			t.Fatal(err)
		}
		out := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "F", Type: to}}))
		if err := msgpack.Unmarshal(b, out.Interface()); err != nil {
			return true
		}
		if !sameValue(v, out.Elem().Field(0)) {
			return true
		}
	}
	return false
}

// edges are the values of rt that a narrower or differently signed
// field misreads first: its extremes, a negative, a fraction.
func edges(rt reflect.Type) []reflect.Value {
	var vs []any
	switch rt.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		bits := rt.Bits()
		vs = []any{int64(-5), int64(-1) << (bits - 1), int64(uint64(1)<<(bits-1) - 1)}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		vs = []any{uint64(5), uint64(math.MaxUint64) >> (64 - rt.Bits())}
	case reflect.Float32, reflect.Float64:
		vs = []any{0.1, -2.5}
	case reflect.String:
		vs = []any{"héllo"}
	case reflect.Slice:
		vs = []any{[]byte{0xff, 0, 'a'}}
	}
	out := make([]reflect.Value, len(vs))
	for i, v := range vs {
		out[i] = reflect.ValueOf(v).Convert(rt)
	}
	return out
}

// sameValue reports whether a and b hold one value: one number, or the
// same bytes.
func sameValue(a, b reflect.Value) bool {
	num := func(v reflect.Value) (*big.Float, bool) {
		f := new(big.Float).SetPrec(256)
		switch v.Kind() {
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
			return f.SetInt64(v.Int()), true
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
			return f.SetUint64(v.Uint()), true
		case reflect.Float32, reflect.Float64:
			return f.SetFloat64(v.Float()), true
		}
		return nil, false
	}
	if x, ok := num(a); ok {
		y, ok := num(b)
		return ok && x.Cmp(y) == 0
	}
	bytesOf := func(v reflect.Value) []byte {
		if v.Kind() == reflect.String {
			return []byte(v.String())
		}
		return v.Bytes()
	}
	return bytes.Equal(bytesOf(a), bytesOf(b))
}

// cents encodes itself as the int64 it is, as a type with its own
// msgpack methods may.
type cents int64

func (c cents) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeInt(int64(c)) }

func (c *cents) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt64()
	*c = cents(v)
	return err
}

// readAs writes v, a struct, with msgpack and reads it into a struct of
// type to: "misread" when the read fails or a field of one Go name in
// both reads back as another value, "zero" when one reads back as its
// zero (a nil, a field only one has), "" when every value reads back.
func readAs(t *testing.T, v any, to reflect.Type) (got string) {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := reflect.New(to)
	defer func() {
		if recover() != nil { // msgpack's reflection panics on a nil for a time.Time field
			got = "misread"
		}
	}()
	if err := msgpack.Unmarshal(b, out.Interface()); err != nil {
		return "misread"
	}
	in := reflect.ValueOf(v)
	for i := range in.NumField() {
		sf := in.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		w := held(in.Field(i))
		r := out.Elem().FieldByName(sf.Name)
		if !r.IsValid() { // a field only the writer has
			got = "zero"
			continue
		}
		r = held(r)
		switch {
		case !w.IsValid() && !r.IsValid():
		case !w.IsValid() || !r.IsValid(): // a nil read as its zero, or the other way round
			got = "zero"
		case !sameHeld(w, r):
			return "misread"
		}
	}
	return got
}

// held is what v holds: the value a pointer points to, or the invalid
// Value for a nil one.
func held(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Pointer {
		return v.Elem()
	}
	return v
}

// sameHeld reports whether a and b hold one value: equal, one time, or
// one number in two types (a type that encodes itself as the number it is).
func sameHeld(a, b reflect.Value) bool {
	if x, ok := a.Interface().(time.Time); ok {
		y, ok := b.Interface().(time.Time)
		return ok && x.Equal(y)
	}
	if a.Type() != b.Type() && a.CanConvert(b.Type()) {
		a = a.Convert(b.Type())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// rules lists the rules findings are expected to break, in order.
func rules(r ...annotations.Rule) []annotations.Rule { return r }

// rulesOf lists the rules the findings of list break, in order.
func rulesOf(list ErrorList) []annotations.Rule {
	var got []annotations.Rule
	for _, e := range list {
		got = append(got, e.Rule)
	}
	return got
}
