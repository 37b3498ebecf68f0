package golden

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/hotkeygen/hotkeygen/generator"
)

// TestDocumentSnippetsCompile holds every ```go block of README.md and
// docs/*.md to the code it shows, in a module of its own that requires
// this repository, as a reader would paste it:
//   - a file (it has a package clause) joins the package of its name,
//     which the generator then runs on; README's and collections' model
//     are one package;
//   - declarations (an annotated struct) are a package of their own,
//     generated too;
//   - a listing of signatures (functions without bodies) must match, type
//     for type, what the generator made of the declarations before it in
//     the same document;
//   - statements are the body of a function that returns an error, with
//     ctx, rdb, logger, and users and orders (repositories of the model's
//     two entities) in scope. Only a variable or import left unused is
//     forgiven, as a fragment leaves them.
//
// Errors point at the document's line.
func TestDocumentSnippetsCompile(t *testing.T) {
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)

	mod := t.TempDir()
	writeModule(t, root, mod)
	files := map[string][]byte{} // path in mod -> content
	add := func(path, s string) { files[path] = append(files[path], s...) }
	var generate []string    // packages the generator runs on, as ./dir
	var body strings.Builder // the statements' functions
	n := 0
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		declared := "" // the directory of the page's last declaring block
		for _, s := range goBlocks(t, page) {
			n++
			at := fmt.Sprintf("%s:%d", rel, s.line)
			line := fmt.Sprintf("//line %s:%d\n", page, s.line)
			switch kind, f, fset := classify(s.code); kind {
			case fileBlock:
				dir := f.Name.Name
				add(fmt.Sprintf("%s/doc%d.go", dir, n), line+s.code)
				if !slices.Contains(generate, "./"+dir) {
					generate = append(generate, "./"+dir)
				}
				declared = dir
			case declBlock:
				dir := fmt.Sprintf("decl%d", n)
				add(dir+"/doc.go", "package "+dir+"\n\n"+line+s.code)
				generate = append(generate, "./"+dir)
				declared = dir
			case listingBlock:
				if declared == "" {
					t.Errorf("%s: a listing of signatures with no declaration before it to check them against", at)
					continue
				}
				add(fmt.Sprintf("%s/listing%d_test.go", declared, n), listing(t, declared, page, s.line, f, fset))
			case stmtBlock:
				fmt.Fprintf(&body, "\nfunc snippet%d() error {\n%s%s\n\treturn nil\n}\n", n, line, s.code)
			default:
				t.Errorf("%s: a go block that is neither a file, declarations, signatures nor statements", at)
			}
		}
	}
	if n == 0 {
		t.Fatal("no go blocks in README.md and docs/")
	}
	add("snippets/snippets.go", snippetsHeader+body.String())
	for path, b := range files {
		if err := os.MkdirAll(filepath.Join(mod, filepath.Dir(path)), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, path), b, 0o666); err != nil {
			t.Fatal(err)
		}
	}

	env := offline()
	// One run a package, as if each were a module of its own: several
	// pages declare a User at user:{ID}, which one run would refuse.
	for _, pkg := range generate {
		res, err := generator.Generate(generator.Config{Dir: mod, Patterns: []string{pkg}, Env: env})
		if err != nil {
			t.Fatalf("the documents' declarations do not generate:\n%v", err)
		}
		for path, b := range res.Files {
			if err := os.WriteFile(path, b, 0o666); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Every package is type-checked here, from source: the go command's
	// compiler would refuse a fragment's unused variable.
	cfg := &packages.Config{Dir: mod, Env: env, Tests: true, Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps | packages.NeedTypes | packages.NeedSyntax}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("no packages loaded from the documents' module")
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			if e.Kind != packages.TypeError {
				t.Errorf("%s", e)
			}
		}
		for _, e := range p.TypeErrors {
			if !e.Soft { // soft: a fragment's unused variable or import
				pos := e.Fset.Position(e.Pos)
				name, _ := filepath.Rel(root, pos.Filename)
				t.Errorf("%s:%d: %s", name, pos.Line, e.Msg)
			}
		}
	}
}

// snippetsHeader is the package the statements are bodies in: what they
// may name without declaring it.
const snippetsHeader = `package snippets

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
	hotkeyotel "github.com/hotkeygen/hotkeygen/runtime/otel"
	"github.com/hotkeygen/hotkeygen/runtime/prom"

	"example.com/golden/model"
)

var (
	ctx    context.Context
	rdb    redis.UniversalClient
	logger *slog.Logger
	users  *model.UserRepo
	orders *model.TokenRepo
)
`

// listingHeader begins a listing's file, in the package it names: the
// packages a listing's types may name.
const listingHeader = `package %s

import (
	"context"
	"iter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime"
)
`

// A goBlock is the code of a ` + "```go" + ` block and the line of the
// document its code starts on.
type goBlock struct {
	line int
	code string
}

// goBlocks returns the go blocks of the Markdown file at path.
func goBlocks(t *testing.T, path string) []goBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []goBlock
	var cur *goBlock
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```go":
			cur = &goBlock{line: i + 2}
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.code += l + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a go block without its end", path, cur.line-1)
	}
	return blocks
}

type blockKind int

const (
	unknownBlock blockKind = iota
	fileBlock
	declBlock
	listingBlock
	stmtBlock
)

// classify says what kind of Go a block is, and returns it parsed when
// it is a file, declarations or a listing.
func classify(code string) (blockKind, *ast.File, *token.FileSet) {
	fset := token.NewFileSet()
	if f, err := parser.ParseFile(fset, "", code, parser.ParseComments); err == nil {
		return fileBlock, f, fset
	}
	f, err := parser.ParseFile(fset, "", "package p\n"+code, parser.ParseComments)
	if err == nil && len(f.Decls) > 0 {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); !ok || fn.Body != nil {
				return declBlock, f, fset
			}
		}
		return listingBlock, f, fset
	}
	if _, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}", 0); err == nil {
		return stmtBlock, nil, nil
	}
	return unknownBlock, nil, nil
}

// listing turns the signatures of f, a listing that starts on line of
// the document at path, into assertions of a test file in pkg, the package of
// the declarations before it: a function's value, or a method's
// expression, must be assignable to the function type the listing
// shows.
func listing(t *testing.T, pkg, path string, line int, f *ast.File, fset *token.FileSet) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, listingHeader, pkg)
	for _, d := range f.Decls {
		fn := d.(*ast.FuncDecl)
		typ := *fn.Type
		value := fn.Name.Name
		if fn.Recv != nil {
			params := *typ.Params
			params.List = append(slices.Clone(fn.Recv.List), params.List...)
			typ.Params = &params
			var recv bytes.Buffer
			printer.Fprint(&recv, fset, fn.Recv.List[0].Type)
			value = "(" + recv.String() + ")." + value
		}
		var sig bytes.Buffer
		if err := printer.Fprint(&sig, fset, &typ); err != nil {
			t.Fatal(err)
		}
		// f was parsed from "package p\n" + the block: its lines are one on.
		fmt.Fprintf(&b, "\n//line %s:%d\nvar _ %s = %s\n", path, line+fset.Position(fn.Pos()).Line-2, sig.String(), value)
	}
	return b.String()
}
