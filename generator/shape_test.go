package generator

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/annotations"
)

func TestWireShapesReadBackAsRecorded(t *testing.T) {
	shapes := []*shape{{
		Type: "User", Version: 3, Format: shapeFormat, Key: `user:{ID}`, Layout: "string",
		Fields: []wireField{
			{Go: "User.ID", Key: "ID", Kind: "int"},
			{Go: "User.Name", Key: "full name", Kind: "str"},
			{Go: "User.Quote", Key: `say "hi"\`, Kind: "str"},
			{Go: "User.Odd", Key: "a version=2", Kind: "int"},
			{Go: "User.Tags", Key: "", Kind: "map[str][]{}"},
			{Go: "User.Tags[*][].X", Key: "[*][].x", Kind: "time"},
			{Go: "User.Seen", Key: "seen", Kind: "*time"},
			{Go: "User.Pair.B", Key: "pair.#1", Kind: "*{}"},
		},
	}, {
		Type: "Token", Version: 1, Format: 1, Key: `token: {UserID}`, Layout: "hash field=Value expires=At", // a record older than formats
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

// Changes no kind label shows (issue 50): each row is judged by
// checkShape on the two records, and proved by msgpack itself, which
// writes a value with the running build's type and reads it with the new
// build's, and the other way round. A change is refused when a value
// reads back as another or fails to decode; it is accepted with a warning
// when a value reads back as its zero (a nil, a field the other build
// does not have); silently when every value reads back as written.
func TestChangesNoKindShowsFollowWhatTheDecodersRead(t *testing.T) {
	type (
		timeField struct{ Updated time.Time }
		timePtr   struct{ Updated *time.Time }
		intField  struct{ Stock int64 }
		intPtr    struct{ Stock *int64 }
		dimsHW    struct {
			_msgpack struct{} `msgpack:",as_array"`
			H, W     int32
		}
		dimsWH struct {
			_msgpack struct{} `msgpack:",as_array"`
			W, H     int32
		}
		minMax     struct{ Min, Max int64 }
		minMaxSwap struct {
			Min int64 `msgpack:"Max"`
			Max int64 `msgpack:"Min"`
		}
		color   struct{ Color string }
		colour  struct{ Colour string }
		price   struct{ Price cents }
		plain   struct{ Price int64 }
		renamed struct{ Stock int64 } // the same shape under another Go name
	)
	now := time.Unix(1700000000, 5)
	seven := int64(7)
	f := func(goPath, key, kind string) wireField { return wireField{Go: "P." + goPath, Key: key, Kind: kind} }
	for _, tc := range []struct {
		name       string
		old, new   []wireField
		was, is    []any // values of the running build's type and of the new one's
		want       string
		proved     string // what msgpack shows, when it is not what the record can judge
		recordType string // the record's type name, when the Go type was renamed
	}{
		{name: "a time becomes a pointer", old: []wireField{f("Updated", "Updated", "time")}, new: []wireField{f("Updated", "Updated", "*time")},
			was: []any{timeField{now}}, is: []any{timePtr{&now}, timePtr{}}, want: "refused"},
		{name: "a pointer to a time becomes a time", old: []wireField{f("Updated", "Updated", "*time")}, new: []wireField{f("Updated", "Updated", "time")},
			was: []any{timePtr{&now}, timePtr{}}, is: []any{timeField{now}}, want: "refused"},
		{name: "an int64 becomes a pointer", old: []wireField{f("Stock", "Stock", "int64")}, new: []wireField{f("Stock", "Stock", "*int64")},
			was: []any{intField{7}}, is: []any{intPtr{&seven}, intPtr{}}, want: "warned"},
		{name: "two fields of an as_array struct trade places", old: []wireField{f("H", "#0", "int32"), f("W", "#1", "int32")}, new: []wireField{f("W", "#0", "int32"), f("H", "#1", "int32")},
			was: []any{dimsHW{H: 1, W: 2}}, is: []any{dimsWH{W: 2, H: 1}}, want: "refused"},
		{name: "two fields trade tags", old: []wireField{f("Min", "Min", "int64"), f("Max", "Max", "int64")}, new: []wireField{f("Min", "Max", "int64"), f("Max", "Min", "int64")},
			was: []any{minMax{1, 9}}, is: []any{minMaxSwap{1, 9}}, want: "refused"},
		{name: "a field renamed in Go without a tag", old: []wireField{f("Color", "Color", "str")}, new: []wireField{f("Colour", "Colour", "str")},
			was: []any{color{"red"}}, is: []any{colour{"red"}}, want: "warned"},
		{name: "a type that encodes itself becomes the type it writes", old: []wireField{f("Price", "Price", "custom:shop.Cents")}, new: []wireField{f("Price", "Price", "int64")},
			// Here every value reads back, but no record sees what a type's
			// methods write: it could as well write a string.
			was: []any{price{250}}, is: []any{plain{250}}, want: "warned", proved: "accepted"},
		{name: "the Go type renamed, its record found by its key template", recordType: "Q", old: []wireField{{Go: "Q.Stock", Key: "Stock", Kind: "int64"}}, new: []wireField{f("Stock", "Stock", "int64")},
			was: []any{intField{7}}, is: []any{renamed{7}}, want: "accepted"},
		{name: "the Go type renamed, and a field's kind changed", recordType: "Q", old: []wireField{{Go: "Q.Updated", Key: "Updated", Kind: "time"}}, new: []wireField{f("Updated", "Updated", "*time")},
			was: []any{timeField{now}}, is: []any{timePtr{}}, want: "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := cmp.Or(tc.recordType, "P")
			recorded := map[string]*shape{typ: {Type: typ, Version: 1, Format: shapeFormat, Key: "p:{ID}", Layout: "string", Fields: tc.old}}
			sh := &shape{Type: "P", Version: 1, Format: shapeFormat, Key: "p:{ID}", Layout: "string", Fields: tc.new}
			old, _ := recordOf(recorded, map[string]bool{"P": true}, sh)
			errs, warns, _ := checkShape(old, sh, &annotations.Spec{})
			got := "accepted"
			switch {
			case len(errs) > 0:
				got = "refused"
			case len(warns) > 0:
				got = "warned"
			}
			if got != tc.want {
				t.Errorf("judged %s (errors %v, warnings %v), want %s", got, errs, warns, tc.want)
			}
			proved := "accepted"
			for _, p := range [][2][]any{{tc.was, tc.is}, {tc.is, tc.was}} {
				for _, v := range p[0] {
					switch read := readAs(t, v, reflect.TypeOf(p[1][0])); {
					case read == "misread":
						proved = "refused"
					case read == "zero" && proved == "accepted":
						proved = "warned"
					}
				}
			}
			if want := cmp.Or(tc.proved, tc.want); proved != want {
				t.Errorf("msgpack: %s, want %s", proved, want)
			}
		})
	}
}

// Each rule of checkShape, alone: a test here fails when one is removed
// (issue 50: only the end-to-end and golden tests did).
func TestEachShapeRuleRefusesWhatTheRunningBuildCannotRead(t *testing.T) {
	base := func() *shape {
		return &shape{Type: "P", Version: 2, Format: shapeFormat, Key: "p:{ID}", Layout: "string", Fields: []wireField{
			{Go: "P.ID", Key: "ID", Kind: "int64"},
			{Go: "P.Where", Key: "Where", Kind: "{}"},
			{Go: "P.Where.X", Key: "Where.X", Kind: "int32"},
		}}
	}
	for _, tc := range []struct {
		name   string
		change func(sh *shape)
		errs   []annotations.Rule // the rule of each error, each where the change was made
		warns  []annotations.Rule
	}{
		{name: "nothing changes", change: func(*shape) {}},
		{name: "the key template", change: func(sh *shape) { sh.Key = "p2:{ID}" }, errs: rules(annotations.RuleWireTemplateChanged)},
		{name: "the layout", change: func(sh *shape) { sh.Layout = "hash field=ID" }, errs: rules(annotations.RuleWireLayoutChanged)},
		{name: "the version goes back", change: func(sh *shape) { sh.Version = 1 }, errs: rules(annotations.RuleWireVersionLowered)},
		{name: "the version goes up, with the kind of a field", change: func(sh *shape) { sh.Version = 3; sh.Fields[0].Kind = "str" }},
		{name: "a field's kind", change: func(sh *shape) { sh.Fields[0].Kind = "str" }, errs: rules(annotations.RuleWireKindChanged)},
		{name: "a field's width", change: func(sh *shape) { sh.Fields[0].Kind = "int32" }, errs: rules(annotations.RuleWireKindChanged)},
		{name: "a field becomes a pointer, its nil read as zero", change: func(sh *shape) { sh.Fields[0].Kind = "*int64" }, warns: rules(annotations.RuleWireKindChanged)},
		{name: "a field's key", change: func(sh *shape) { sh.Fields[0].Key = "id" }, errs: rules(annotations.RuleWireKeyMoved)},
		{name: "a struct becomes a map: one error, at the struct, not at its fields", change: func(sh *shape) {
			sh.Fields[1].Kind = "map[str]int32"
			sh.Fields = sh.Fields[:2]
		}, errs: rules(annotations.RuleWireKindChanged)},
		{name: "a field added", change: func(sh *shape) { sh.Fields = append(sh.Fields, wireField{Go: "P.Name", Key: "Name", Kind: "str"}) }, warns: rules(annotations.RuleWireFieldsChanged)},
		{name: "a field dropped", change: func(sh *shape) { sh.Fields = sh.Fields[:1] }, warns: rules(annotations.RuleWireFieldsChanged)},
		{name: "a field in a dropped one's place, of its kind", change: func(sh *shape) { sh.Fields[0] = wireField{Go: "P.Num", Key: "Num", Kind: "int64"} },
			warns: rules(annotations.RuleWireFieldsChanged, annotations.RuleWireRenameSuspected)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := base()
			tc.change(sh)
			errs, warns, _ := checkShape(base(), sh, &annotations.Spec{})
			if got := rulesOf(errs); !slices.Equal(got, tc.errs) {
				t.Errorf("errors %v, of rules %v; want %v", errs, got, tc.errs)
			}
			if got := rulesOf(warns); !slices.Equal(got, tc.warns) {
				t.Errorf("warnings %v, of rules %v; want %v", warns, got, tc.warns)
			}
		})
	}
}

// A record the generator cannot read is an error at its line, which says
// what to do: a line edited by hand, or a record of a newer hotkeygen.
func TestARecordThatDoesNotReadSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
		rule             annotations.Rule
	}{
		{name: "a version that is no number", line: `User version=x layout="string" key="u:{ID}"`, want: "edited by hand", rule: annotations.RuleWireRecordEdited},
		{name: "a format this hotkeygen never wrote", line: `User version=1 layout="string" key="u:{ID}" format=1`, want: "edited by hand", rule: annotations.RuleWireRecordEdited},
		{name: "a newer hotkeygen's format", line: `User version=1 layout="string" key="u:{ID}" format=9`, want: "format 9, newer than this hotkeygen writes (2): generate with the hotkeygen that wrote it", rule: annotations.RuleWireRecordNewer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := readShapes("hotkey_gen.go", []byte(wireDirective+tc.line+"\n"))
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) || !strings.HasPrefix(errs[0].Error(), "hotkey_gen.go:1:1: ") || errs[0].Rule != tc.rule {
				t.Errorf("errors %v, want one at hotkey_gen.go:1:1 saying %q, breaking %s", errs, tc.want, tc.rule)
			}
		})
	}
}
