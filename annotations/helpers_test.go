package annotations

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// declaredRules lists the rules of rules.go, in their order there.
func declaredRules(t *testing.T) []Rule {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "rules.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var rules []Rule
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if typ, _ := vs.Type.(*ast.Ident); typ == nil || typ.Name != "Rule" {
				continue
			}
			for _, v := range vs.Values {
				s, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				rules = append(rules, Rule(s))
			}
		}
	}
	if len(rules) == 0 {
		t.Fatal("rules.go declares no Rule")
	}
	return rules
}

// loadTyped loads the repository's packages of patterns, without their
// tests, with their syntax and types.
func loadTyped(t *testing.T, patterns ...string) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{
		Dir:  "..",
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 || len(pkgs) != len(patterns) {
		t.Fatalf("loading %v failed", patterns)
	}
	return pkgs
}

// isNamed reports whether t is the type of this package named name.
func isNamed(t types.Type, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == name && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "github.com/hotkeygen/hotkeygen/annotations"
}

// documentedRules lists the rules of docs/findings.md's table of rules,
// each row's first cell, in their order there.
func documentedRules(t *testing.T) []Rule {
	t.Helper()
	b, err := os.ReadFile("../docs/findings.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Rules\n")
	if !ok {
		t.Fatal("docs/findings.md has no section ## Rules")
	}
	var rules []Rule
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if cell, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ := strings.Cut(cell, "`")
			rules = append(rules, Rule(name))
		}
	}
	return rules
}
