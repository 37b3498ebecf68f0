package generator

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// runtimeWithFuncs lists the runtime's With* option functions.
func runtimeWithFuncs(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "runtime")
	pkg, err := build.ImportDir(dir, 0) // the default build's files: no benchmark's tag
	if err != nil {
		t.Fatal(err)
	}
	var funcs []string
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "With") {
				funcs = append(funcs, fd.Name.Name)
			}
		}
	}
	return funcs
}

func TestEveryAnnotationOptionHasARuntimeOption(t *testing.T) {
	for _, name := range annotations.OptionNames() {
		if _, ok := runtimeOptions[name]; !ok && !codeOptions[name] {
			t.Errorf("annotations accepts %q, but the generator's table has no runtime option for it", name)
		}
	}
}

func TestEveryRuntimeOptionIsReachable(t *testing.T) {
	// Options a directive cannot set: the entity comes from the type, the
	// loaders are functions the generated With<Name>Loader options adapt,
	// and the rest belong to the program, not to the annotated type; the
	// sync hook is a function too, adapted by With<Name>SyncHook.
	notAnnotated := []string{
		"WithEntity", "WithLoader", "WithBatchLoader", "WithSyncHook", "WithCollectionLoader",
		"WithLogger", "WithMonitorEvery", "WithRebuildLockTTL", "WithDegradeLimit",
		"WithAggregateTop", "WithAutoPipeline",
	}
	var tabled []string
	for _, ro := range runtimeOptions {
		tabled = append(tabled, ro.Func)
	}
	for _, fn := range runtimeWithFuncs(t) {
		if !slices.Contains(tabled, fn) && !slices.Contains(notAnnotated, fn) {
			t.Errorf("runtime.%s has no annotation option in the generator's table", fn)
		}
	}
	for _, fn := range tabled {
		if !slices.Contains(runtimeWithFuncs(t), fn) {
			t.Errorf("the table emits runtime.%s, which does not exist", fn)
		}
	}
}

func TestOptionsFollowTheSourceOrderAfterTheEntity(t *testing.T) {
	spec, err := annotations.ParseLine(token.Position{Filename: "x.go", Line: 1, Column: 1},
		"//hotkey:cache key=user:{ID} top_n=5 name=Account ttl=90m hot_qps=2500.5")
	if err != nil {
		t.Fatal(err)
	}
	got, errs := options("account", spec)
	want := []option{
		{"WithEntity", "account"},
		{"WithTopN", 5},
		{"WithTTL", 90 * time.Minute},
		{"WithHotQPS", 2500.5},
	}
	if len(errs) > 0 || !slices.Equal(got, want) {
		t.Errorf("options = %v, %v; want %v", got, errs, want)
	}
}

func TestAnOptionMissingFromTheTableIsAnError(t *testing.T) {
	pos := token.Position{Filename: "x.go", Line: 3, Column: 30}
	spec := &annotations.Spec{Args: []annotations.Arg{{Name: "key", Value: "u:{ID}"}, {Name: "shiny_new", Value: "1", Pos: pos}}}
	_, errs := options("user", spec)
	if len(errs) != 1 || errs[0].Pos != pos || !strings.Contains(errs[0].Msg, "shiny_new") {
		t.Errorf("options with an unknown option returned %v; want one error at %v", errs, pos)
	}
}
