package runtime

import (
	"go/ast"
	"go/build"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
)

// parsePackage parses the non-test files of the default build of the
// package in dir.
func parsePackage(t *testing.T, dir string) []*ast.File {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0) // the default build's files: no benchmark's tag
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(gotoken.NewFileSet(), filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// The With functions and the Config fields are written by hand, for the
// public API; each must be the one its row names. A row's variable
// (runtime/internal/config) is named after its field, and With<Field>
// returns config.<Field>.With; the runtime re-exports each constant a
// choice names.
func TestEveryOptionRowHasItsFieldAndWithFunction(t *testing.T) {
	withCalls := map[string]string{} // With function -> row variable it returns .With of
	optFields := map[string]string{} // row variable -> field its row declares
	consts := map[string]string{}    // config constant -> its string value
	exported := map[string]string{}  // runtime constant -> the config constant it is
	for _, f := range append(parsePackage(t, "."), parsePackage(t, "internal/config")...) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Recv != nil || !strings.HasPrefix(n.Name.Name, "With") || len(n.Body.List) != 1 {
					return false
				}
				if ret, ok := n.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
					if call, ok := ret.Results[0].(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "With" {
							if row, ok := sel.X.(*ast.SelectorExpr); ok {
								withCalls[n.Name.Name] = row.Sel.Name
							}
						}
					}
				}
				return false
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i >= len(n.Values) {
						break
					}
					switch v := n.Values[i].(type) {
					case *ast.BasicLit:
						if s, err := strconv.Unquote(v.Value); err == nil && v.Kind == gotoken.STRING {
							consts[name.Name] = s
						}
					case *ast.SelectorExpr:
						if pkg, ok := v.X.(*ast.Ident); ok && pkg.Name == "config" {
							exported[name.Name] = v.Sel.Name
						}
					case *ast.CallExpr:
						if sel, ok := v.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ProgramOnly" {
							v, _ = sel.X.(*ast.CallExpr)
						}
						if v != nil && len(v.Args) >= 2 {
							if lit, ok := v.Args[1].(*ast.BasicLit); ok && lit.Kind == gotoken.STRING {
								optFields[name.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
			return true
		})
	}
	names := map[string]bool{}
	for _, s := range config.Options.Settings() {
		if names[s.Name] {
			t.Errorf("two rows are named %q", s.Name)
		}
		names[s.Name] = true
		if got := withCalls[s.Func()]; got != s.Field {
			t.Errorf("%s: the row's With function %s returns config.%s.With, want config.%s.With", s.Name, s.Func(), got, s.Field)
		}
		if got := optFields[s.Field]; got != s.Field {
			t.Errorf("%s: config.%s declares field %q, want %q", s.Name, s.Field, got, s.Field)
		}
		for _, w := range s.Choices {
			if got, ok := consts[exported[w.Const]]; !ok || got != w.Text {
				t.Errorf("%s: the runtime's constant %s is %q, want %q", s.Name, w.Const, got, w.Text)
			}
		}
		// The row's own With sets its field and records it written.
		var c Config
		out := reflect.ValueOf(s.With).Call([]reflect.Value{reflect.ValueOf(s.Default)})
		out[0].Interface().(Option)(&c)
		if !reflect.DeepEqual(s.Value(&c), s.Default) || !s.Written(&c) || c.Written&(c.Written-1) != 0 {
			t.Errorf("%s: its With wrote %v (written %b), want %v in %s alone", s.Name, s.Value(&c), c.Written, s.Default, s.Field)
		}
	}
	for fn, v := range withCalls {
		if optFields[v] != strings.TrimPrefix(fn, "With") {
			t.Errorf("%s returns %s.With, not the row of its field", fn, v)
		}
	}
}

// Every exported field of Config is an option's, but for those that are
// no annotation's business: an option added without a row is caught.
func TestEveryConfigFieldIsDeclared(t *testing.T) {
	fields := map[string]bool{"Entity": true, "Logger": true, "Clock": true, "Given": true, "Written": true, "Test": true}
	for _, s := range config.Options.Settings() {
		fields[s.Field] = true
	}
	for f := range reflect.TypeFor[Config]().Fields() {
		if f.IsExported() && !fields[f.Name] {
			t.Errorf("Config.%s has no row in options.go", f.Name)
		}
	}
}
