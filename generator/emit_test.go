package generator

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		width int
		want  []string
	}{{
		name: "short text stays on one line",
		text: "Stats returns a snapshot.", width: 40,
		want: []string{"Stats returns a snapshot."},
	}, {
		name: "lines break between words",
		text: "one two three four", width: 9,
		want: []string{"one two", "three", "four"},
	}, {
		name: "a word longer than the width gets its own line",
		text: "a verylongword b", width: 5,
		want: []string{"a", "verylongword", "b"},
	}, {
		name: "a newline starts a new line",
		text: "first\nsecond", width: 40,
		want: []string{"first", "second"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wrap(tt.text, tt.width); !slices.Equal(got, tt.want) {
				t.Errorf("wrap = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDurationParts(t *testing.T) {
	tests := []struct {
		d    time.Duration
		n    int64
		unit string
	}{
		{0, 0, ""},
		{30 * time.Minute, 30, "Minute"},
		{90 * time.Minute, 90, "Minute"},
		{2 * time.Hour, 2, "Hour"},
		{1500 * time.Millisecond, 1500, "Millisecond"},
		{10*time.Minute + 30*time.Second, 630, "Second"},
		{time.Nanosecond, 1, "Nanosecond"},
	}
	for _, tt := range tests {
		if n, unit := durationParts(tt.d); n != tt.n || unit != tt.unit {
			t.Errorf("durationParts(%v) = %d, %q; want %d, %q", tt.d, n, unit, tt.n, tt.unit)
		}
	}
}

func TestOptionValuesReadAsAPersonWouldWriteThem(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{90 * time.Minute, "90 * time.Minute"},
		{time.Minute, "time.Minute"},
		{time.Duration(0), "0"},
		{2500.5, "2500.5"},
		{0.1, "0.1"},
		{10240, "10240"},
		{true, "true"},
		{false, "false"},
		{"user", `"user"`},
		{modeConst("loader"), "runtime.DegradeLoader"},
		{modeConst("off"), "runtime.DegradeOff"},
		{modeConst("later"), `"later"`}, // annotations rejects it; it still compiles
		{modeConst("pubsub"), "runtime.InvalidatePubSub"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf("%#v", optionValue(tt.v)); got != tt.want {
			t.Errorf("optionValue(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
}

// TestEmitNeedsOnlyTheModel renders a model built by hand, with no source
// behind it: the emitter reads nothing else.
func TestEmitNeedsOnlyTheModel(t *testing.T) {
	self := types.NewPackage("example.com/app", "app")
	obj := types.NewTypeName(token.NoPos, self, "User", nil)
	user := types.NewNamed(obj, types.NewStruct([]*types.Var{
		types.NewField(token.NoPos, self, "ID", types.Typ[types.Int64], false),
		types.NewField(token.NoPos, self, "Name", types.Typ[types.String], false),
	}, nil), nil)
	self.Scope().Insert(obj)
	id := &param{Name: "id", Field: "ID", Type: types.Typ[types.Int64], Kind: keyInt, Exact: true}
	clone := &cloneFunc{Name: "cloneUser", Type: user}
	pkg := &pkgModel{Path: self.Path(), Name: self.Name(), Output: DefaultOutput,
		Entities: []*entity{{
			Type: user, Name: "User", Template: "user:{ID}",
			Key:    []keyPart{{Lit: "user:"}, {Param: id}},
			Params: []*param{id}, ManyParam: "ids",
			Options: []option{{Func: "WithEntity", Value: "user"}},
			Clone:   clone,
			Changes: true, Bloom: true,
			Shape: &shape{Type: "User", Version: 1, Key: "user:{ID}", Layout: "string",
				Fields: []wireField{{Go: "User.ID", Key: "ID", Kind: "int"}, {Go: "User.Name", Key: "Name", Kind: "str"}}},
		}},
		Clones: []*cloneFunc{clone},
	}
	pkg.Imports = importNames(self, pkg)

	out, err := emit(pkg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), DefaultOutput, out, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, out)
	}
	// The model chose every import's name, so that none clashes with the
	// package's own names: the emitter must not import what it has not
	// named.
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); pkg.Imports[path].Name == "" {
			t.Errorf("the output imports %s, which the model has not named", path)
		}
	}
	f, err = parser.ParseFile(token.NewFileSet(), DefaultOutput, out, 0)
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, out)
	}
	declared := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			declared[d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					declared[ts.Name.Name] = true
				}
			}
		}
	}
	e := pkg.Entities[0]
	for _, name := range []string{e.Repo(), e.Ctor(), e.MustCtor(), e.Loader(), e.BatchLoader(), e.KeyName(),
		e.Get(), e.GetMany(), e.Set(), e.Del(), e.MarkChanged(), e.SyncHook(), e.WarmBloom(), "Stats", "History", "Close", clone.Name} {
		if !declared[name] {
			t.Errorf("%s is not declared in:\n%s", name, out)
		}
	}
	if !bytes.HasPrefix(out, []byte(Header+"\n")) {
		t.Errorf("the output does not start with %q", Header)
	}
}
