package track

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestNodeOptionsCopyTheSameFields keeps the two copies of a client's
// options in step: a field one copies that the other's source has too
// (a TLS setting, a credentials provider) is copied by both, so no
// topology's sessions and probes dial without it.
func TestNodeOptionsCopyTheSameFields(t *testing.T) {
	copied := copiedFields(t, "options.go")
	conn, node := copied["ConnOptions"], copied["ClusterNodeOptions"]
	if len(conn) == 0 || len(node) == 0 {
		t.Fatalf("found the fields of %v in options.go, want both functions'", copied)
	}
	cluster := reflect.TypeFor[redis.ClusterOptions]()
	for _, f := range conn {
		if _, ok := cluster.FieldByName(f); ok && !slices.Contains(node, f) {
			t.Errorf("ConnOptions copies %s, which ClusterOptions has too, but ClusterNodeOptions does not", f)
		}
	}
	for _, f := range node {
		if f != "Addr" && !slices.Contains(conn, f) {
			t.Errorf("ClusterNodeOptions copies %s, but ConnOptions does not", f)
		}
	}
}

// copiedFields returns, for each function of file returning a
// *redis.Options literal, the fields the literal sets.
func copiedFields(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if sel, ok := lit.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Options" {
				return true
			}
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					out[fn.Name.Name] = append(out[fn.Name.Name], kv.Key.(*ast.Ident).Name)
				}
			}
			return false
		})
	}
	return out
}
