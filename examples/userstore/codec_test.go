package userstore

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// reflectOrder is Order without the generated codec.
type reflectOrder Order

// FuzzOrderCodec round-trips random orders through the generated codec and
// msgpack's reflection, both ways, and feeds corrupt bytes to
// ReadMsgpack, which must fail cleanly or agree with reflection.
//
//	go test -fuzz FuzzOrderCodec ./examples/userstore
func FuzzOrderCodec(f *testing.F) {
	f.Add("acme", uint32(7), "sku-1", 3, "sku-2", -1, int64(1999), true, []byte{0x84, 0xa6})
	f.Add("", uint32(0), "", 0, "", 0, int64(0), false, []byte{0xc0})
	f.Add("acme", uint32(7), "sku", 1, "", 0, int64(1), false, []byte{0x94, 0xa1, 'a', 0x07, 0x91, 0x92, 0xa0, 0x01, 0x05})
	f.Add("ü", uint32(1<<31), "x", 1<<40, "y", -1<<40, int64(-5), true, []byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, tenant string, num uint32, sku1 string, qty1 int, sku2 string, qty2 int, total int64, nilItems bool, corrupt []byte) {
		o := &Order{Tenant: tenant, Num: num, Total: total, Items: []Item{{sku1, qty1}, {sku2, qty2}}}
		if nilItems {
			o.Items = nil
		}
		gen, err := o.AppendMsgpack(nil)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := msgpack.Marshal((*reflectOrder)(o))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gen, plain) {
			t.Fatalf("generated % x\nreflection % x", gen, plain)
		}
		var back Order
		if err := back.ReadMsgpack(plain); err != nil {
			t.Fatal(err)
		}
		var viaReflect reflectOrder
		if err := msgpack.Unmarshal(gen, &viaReflect); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&back, o) || !reflect.DeepEqual((*Order)(&viaReflect), o) {
			t.Fatalf("round trip: generated %+v, reflection %+v, want %+v", back, viaReflect, *o)
		}

		// Written as arrays (UseArrayEncodedStructs), as other clients
		// write tuples, the order reads back the same.
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseArrayEncodedStructs(true)
		if err := enc.Encode((*reflectOrder)(o)); err != nil {
			t.Fatal(err)
		}
		var fromArray Order
		if err := fromArray.ReadMsgpack(buf.Bytes()); err != nil || !reflect.DeepEqual(&fromArray, o) {
			t.Fatalf("array-encoded % x: %v, read %+v, want %+v", buf.Bytes(), err, fromArray, *o)
		}

		// Corrupt input: an error or a value, never a panic; when both
		// accept it, both read the same. Reflection is given only what
		// wire.Skip accepts, as the runtime gives it: on anything else it
		// allocates whatever a corrupt length declares.
		var g Order
		errGen := g.ReadMsgpack(corrupt)
		if _, err := wire.Skip(corrupt); err != nil {
			if errGen == nil {
				t.Fatalf("% x: ReadMsgpack took what Skip refuses: %v", corrupt, err)
			}
			return
		}
		var r reflectOrder
		errRef := msgpack.Unmarshal(corrupt, &r)
		if (errGen == nil) != (errRef == nil) {
			t.Fatalf("% x: generated %v, reflection %v", corrupt, errGen, errRef)
		}
		if errGen == nil && !reflect.DeepEqual(&g, (*Order)(&r)) {
			t.Fatalf("% x: generated read %+v, reflection %+v", corrupt, g, r)
		}
	})
}
