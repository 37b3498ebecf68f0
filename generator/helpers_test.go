package generator

import (
	"bytes"
	"go/types"
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
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
