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

func TestTheModelNeedsOnlyATypeCheckedPackage(t *testing.T) {
	in := checkSource(t, `package app

//hotkey:cache key="acct:{Org}:{UserID}" ttl=5m
type Account struct {
	Org    string
	UserID int64
	Tags   []string
}
`)
	targets, errs := findTargets(in)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	pkg, errs := buildPackage(in, targets)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
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
