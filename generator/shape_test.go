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
