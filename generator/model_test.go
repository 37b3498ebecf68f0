package generator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"testing"
)

// checkSource type-checks one file of package app the way load hands a
// package to the model, without the go command.
func checkSource(t *testing.T, src string) *pkgInput {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/src/app/user.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{}).Check("example.com/app", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pkgInput{Path: "example.com/app", Name: "app", Dir: "/src/app", Fset: fset, Files: []*ast.File{f}, Types: pkg, Output: "/src/app/" + DefaultOutput}
}

// buildSource models the annotated structs of src.
func buildSource(t *testing.T, src string) *pkgModel {
	t.Helper()
	in := checkSource(t, src)
	targets, errs := findTargets(in)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	pkg, errs := buildPackage(in, targets)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return pkg
}

func TestTheModelNeedsOnlyATypeCheckedPackage(t *testing.T) {
	pkg := buildSource(t, `package app

//hotkey:cache key="acct:{Org}:{UserID}" ttl=5m
type Account struct {
	Org    string
	UserID int64
	Tags   []string
}
`)
	if len(pkg.Entities) != 1 {
		t.Fatalf("%d entities, want 1", len(pkg.Entities))
	}
	e := pkg.Entities[0]
	var params []string
	for _, p := range e.Params {
		params = append(params, p.Name)
	}
	var opts []string
	for _, o := range e.Options {
		opts = append(opts, o.Func)
	}
	for _, c := range []struct{ what, got, want string }{
		{"the entity's name", e.Name, "Account"},
		{"the parameters, named after the key fields", joinAnd(params), "org and userID"},
		{"the batch parameter of a composite key", e.ManyParam, "keys"},
		{"the options, after the entity", joinAnd(opts), "WithEntity and WithTTL"},
		{"the clone function", e.Clone.Name, "cloneAccount"},
		{"the runtime's import name", pkg.Imports[runtimePath].Name, "runtime"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.what, c.got, c.want)
		}
	}
	if !e.Composite() || e.Codec == nil {
		t.Errorf("Composite() = %v, Codec = %v; want a composite key and a generated codec", e.Composite(), e.Codec)
	}
}

func TestImportsGiveWayToThePackagesOwnNames(t *testing.T) {
	pkg := buildSource(t, `package app

var errors, iter, runtime = 1, 2, 3

//hotkey:cache key="user:{ID}" bloom=on
type User struct {
	ID int64
}
`)
	// Set<Name> writes errors.New, Warm<Name>Bloom iter.Seq.
	for path, want := range map[string]string{"errors": "errors2", "iter": "iter2", runtimePath: "runtime2", "context": "context"} {
		if got := pkg.Imports[path]; got.Name != want || got.Renamed != (path != "context") {
			t.Errorf("%s is imported as %+v, want the name %s", path, got, want)
		}
	}
}

func TestCodecFunctionsAreNamedOncePerTypeWithoutClashes(t *testing.T) {
	pkg := buildSource(t, `package app

//hotkey:cache key="user:{ID}"
type User struct {
	ID   int64
	Home Point
	Pins []*Point
	Box  box
	Seen map[string]Box
}

//hotkey:cache key="shop:{ID}"
type Shop struct {
	ID  int64
	At  Point
	Box box
}

type Point struct{ X, Y int }

type box struct{ W int }

type Box struct{ H int }

func appendMsgpackPoint() {}
`)
	var names []string
	for _, fn := range pkg.Codecs {
		names = append(names, fn.Type.Obj().Name()+"="+fn.Name)
	}
	// One pair per type, whichever entities and fields hold it; Box comes
	// before box, and the package's own appendMsgpackPoint takes Point's
	// plain name.
	if got, want := joinAnd(names), "Box=Box, box=Box2, Point=Point2, Shop=Shop and User=User"; got != want {
		t.Errorf("codec functions: %s, want %s", got, want)
	}
	for _, e := range pkg.Entities {
		if e.CodecFunc == nil || e.CodecFunc.Type != e.Type {
			t.Errorf("%s calls %+v", e.Name, e.CodecFunc)
		}
	}
}
