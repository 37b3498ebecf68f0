package generator

import (
	"reflect"
	"testing"
)

func TestWireShapesReadBackAsRecorded(t *testing.T) {
	shapes := []*shape{{
		Type: "User", Version: 3, Key: `user:{ID}`, Layout: "string",
		Fields: []wireField{
			{Go: "User.ID", Key: "ID", Kind: "int"},
			{Go: "User.Name", Key: "full name", Kind: "str"},
			{Go: "User.Quote", Key: `say "hi"\`, Kind: "str"},
			{Go: "User.Odd", Key: "a version=2", Kind: "int"},
			{Go: "User.Tags", Key: "", Kind: "map[str][]{}"},
			{Go: "User.Tags[*][].X", Key: "[*][].x", Kind: "time"},
		},
	}, {
		Type: "Token", Version: 1, Key: `token: {UserID}`, Layout: "hash field=Value expires=At",
	}}
	var content string
	for _, sh := range shapes {
		for _, line := range sh.record() {
			content += line + "\n"
		}
	}
	got, errs := readShapes("hotkey_gen.go", []byte(content))
	if len(errs) > 0 {
		t.Fatalf("readShapes: %v\n%s", errs, content)
	}
	for _, want := range shapes {
		g := got[want.Type]
		if g == nil {
			t.Fatalf("%s not read back from\n%s", want.Type, content)
		}
		g.Line = 0
		if !reflect.DeepEqual(g, want) {
			t.Errorf("read back %+v\nwant %+v", g, want)
		}
	}
}

// A number's kind changes, and str and bin trade places, as the decoders
// read each other's values (issue 50: int64 to int32 read 1<<40 as 0,
// int64 to uint64 read -5 as 2^64-5, both accepted; []byte to string,
// which both decoders read alike, refused). Each row is judged by
// kindChange and proved by msgpack itself, whose conversions the
// generated codec follows: the values at each type's edges are written by
// one build's type and read into the other's, both ways.
func TestKindChangesFollowWhatTheDecodersRead(t *testing.T) {
	for _, tc := range []struct {
		from, to reflect.Type
		refused  bool
	}{
		{from: typeOf[int64](), to: typeOf[int32](), refused: true},  // 1<<40 reads as 0
		{from: typeOf[int32](), to: typeOf[int64](), refused: true},  // the running build reads the new one's 1<<40 as 0
		{from: typeOf[int64](), to: typeOf[uint64](), refused: true}, // -5 reads as 2^64-5
		{from: typeOf[uint32](), to: typeOf[int64](), refused: true}, // the running build reads -1 as 2^32-1
		{from: typeOf[int](), to: typeOf[int64]()},                   // one kind
		{from: typeOf[float32](), to: typeOf[float64](), refused: true},
		{from: typeOf[[]byte](), to: typeOf[string]()},
		{from: typeOf[string](), to: typeOf[[]byte]()},
	} {
		old, kind := kindOfType(t, tc.from), kindOfType(t, tc.to)
		lost, _ := kindChange(old, kind)
		if refused := lost != ""; refused != tc.refused {
			t.Errorf("%v to %v (%s to %s): refused %v (%q), want %v", tc.from, tc.to, old, kind, refused, lost, tc.refused)
		}
		if misread := misreads(t, tc.from, tc.to) || misreads(t, tc.to, tc.from); misread != tc.refused {
			t.Errorf("%v to %v: msgpack misreads a value %v, want %v", tc.from, tc.to, misread, tc.refused)
		}
	}
	// Every pair of numbers of one family, and str and bin: the rule and
	// msgpack agree.
	types := []reflect.Type{typeOf[int8](), typeOf[int16](), typeOf[int32](), typeOf[int64](), typeOf[uint8](), typeOf[uint16](),
		typeOf[uint32](), typeOf[uint64](), typeOf[float32](), typeOf[float64](), typeOf[string](), typeOf[[]byte]()}
	for _, a := range types {
		for _, b := range types {
			old, kind := kindOfType(t, a), kindOfType(t, b)
			lost, _ := kindChange(old, kind)
			if lost == "not the same kind" {
				continue // refused as before: int to float, str to int
			}
			if misread := misreads(t, a, b) || misreads(t, b, a); misread != (lost != "") {
				t.Errorf("%v to %v (%s to %s): refused %v (%q), but msgpack misreads a value: %v", a, b, old, kind, lost != "", lost, misread)
			}
		}
	}
}
