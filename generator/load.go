package generator

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// pkgInput is one loaded package, as the model stage reads it.
type pkgInput struct {
	Path string // import path
	Name string
	Dir  string
	Fset *token.FileSet
	// Files are the package's own source files, without the output file.
	Files []*ast.File
	Types *types.Package
	// TypeErrors are tolerated while loading: a package that uses its
	// generated repository does not type-check while that code is hidden.
	// They are reported only when a type the generator reads is broken.
	TypeErrors []packages.Error

	// Output is the absolute path of the file generated for the package.
	Output string
	// OutputState says whether that file exists and who wrote it.
	OutputState outputState
	// Previous is that file's content when it is ours: the wire shapes
	// it records, which the new ones are checked against (shape.go).
	Previous []byte
}

// loadMode asks go/packages only for what the model reads: names and
// directories, syntax for the doc comments, and types for the fields.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes

// load reads the packages matching cfg.Patterns.
//
// The previous output must not take part: it may no longer compile (it can
// name a field or a package that is gone), and it declares the very names
// we are about to generate. A first, cheap listing finds each package's
// directory; every output file there that starts with Header is then
// replaced, through an overlay, by a file holding only its package clause.
// The go command itself sees the overlay, so the stale file's imports are
// not resolved either.
//
// Errors that make the syntax unreadable (parse errors, listing errors) are
// fatal. Type errors are kept on the package and reported only when a type
// the generator reads is broken: code that calls the generated repository
// fails to type-check exactly while that repository is hidden.
func load(cfg Config) ([]*pkgInput, error) {
	base := &packages.Config{Dir: cfg.Dir, Env: cfg.Env, Tests: false}

	list := *base
	list.Mode = packages.NeedName | packages.NeedFiles
	listed, err := packages.Load(&list, cfg.Patterns...)
	if err != nil {
		return nil, err
	}
	overlay := map[string][]byte{}
	states := map[string]outputState{} // by output path
	previous := map[string][]byte{}    // by output path, the content of ours
	for _, p := range listed {
		if p.Dir == "" || p.Name == "" {
			continue // the full load reports why
		}
		out := filepath.Join(p.Dir, cfg.Output)
		states[out], previous[out] = readOutput(out)
		if states[out] == ourOutput {
			overlay[out] = []byte(Header + "\n\npackage " + p.Name + "\n")
		}
	}

	full := *base
	full.Mode = loadMode
	full.Overlay = overlay
	pkgs, err := packages.Load(&full, cfg.Patterns...)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return cmp.Compare(a.PkgPath, b.PkgPath) })

	var errs ErrorList
	var inputs []*pkgInput
	for _, p := range pkgs {
		fatal := false
		var typeErrs []packages.Error
		for _, e := range p.Errors {
			switch {
			case e.Kind == packages.TypeError:
				typeErrs = append(typeErrs, e)
			case e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# "):
				// The go command compiling the package for export data:
				// the same type errors, seen without the overlay's
				// help, reported again by our own type check.
			default:
				fatal = true
				errs = append(errs, packagesError(e))
			}
		}
		if fatal {
			continue
		}
		in := &pkgInput{
			Path:       p.PkgPath,
			Name:       p.Name,
			Dir:        p.Dir,
			Fset:       p.Fset,
			Types:      p.Types,
			TypeErrors: typeErrs,
			Output:     filepath.Join(p.Dir, cfg.Output),
		}
		if s, ok := states[in.Output]; ok {
			in.OutputState, in.Previous = s, previous[in.Output]
		} else {
			in.OutputState, in.Previous = readOutput(in.Output)
		}
		for _, f := range p.Syntax {
			if p.Fset.Position(f.Package).Filename != in.Output || in.OutputState != ourOutput {
				in.Files = append(in.Files, f)
			}
		}
		slices.SortFunc(in.Files, func(a, b *ast.File) int {
			return cmp.Compare(p.Fset.Position(a.Package).Filename, p.Fset.Position(b.Package).Filename)
		})
		inputs = append(inputs, in)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("no packages match %s", strings.Join(cfg.Patterns, " "))
	}
	return inputs, nil
}

// packagesError converts an error of go/packages, whose position is a
// "file:line:col" string, into an Error.
func packagesError(e packages.Error) *Error {
	return &Error{Pos: parsePos(e.Pos), Rule: annotations.RulePackageError, Msg: e.Msg}
}

// parsePos reads "file:line:col", "file:line" or "file" as go/packages and
// the go command write them.
func parsePos(s string) token.Position {
	var pos token.Position
	if s == "" || s == "-" {
		return pos
	}
	rest := s
	var nums []int
	for range 2 {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		rest = rest[:i]
	}
	pos.Filename = rest
	if len(nums) > 0 {
		pos.Line = nums[0]
	}
	if len(nums) > 1 {
		pos.Column = nums[1]
	}
	return pos
}
