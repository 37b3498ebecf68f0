package generator

import (
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// target is a package-level struct type documented with //hotkey:cache,
// with the Spec its directives describe.
type target struct {
	Obj  *types.TypeName
	Spec *annotations.Spec
}

// name is what t's generated names are built on: name=, or the type's
// name, with an upper-case first letter (UserRepo, GetUser).
func (t target) name() string { return upperFirst(cmp.Or(t.Spec.Name, t.Obj.Name())) }

// entity is the name the runtime knows t by (runtime.WithEntity, "user"):
// in stats and logs, and in the Redis keys it names after the entity
// rather than after the key template (see entityKeys).
func (t target) entity() string { return lowerIdent(t.name()) }

// findTargets reads the doc comments of in's files. A directive anywhere
// other than on a package-level, non-generic struct type is an error at the
// directive: silently ignoring it would leave the user wondering why no
// repository appears.
func findTargets(in *pkgInput) ([]target, ErrorList) {
	var targets []target
	var errs ErrorList
	for _, f := range in.Files {
		// Every comment group holding a directive must be claimed by a
		// struct type; whatever is left over is misplaced.
		pending := map[*ast.CommentGroup]bool{}
		for _, cg := range f.Comments {
			if _, ok := directivePos(in.Fset, cg); ok {
				pending[cg] = true
			}
		}
		claim := func(groups ...*ast.CommentGroup) (token.Position, bool) {
			for _, g := range groups {
				if pos, ok := directivePos(in.Fset, g); ok && pending[g] {
					for _, g := range groups {
						delete(pending, g)
					}
					return pos, true
				}
			}
			return token.Position{}, false
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				if decl.Tok != token.TYPE {
					for _, s := range decl.Specs {
						what, doc := decl.Tok.String(), (*ast.CommentGroup)(nil)
						if vs, ok := s.(*ast.ValueSpec); ok {
							what, doc = what+" "+vs.Names[0].Name, vs.Doc
						}
						if pos, ok := claim(decl.Doc, doc); ok {
							errs.Add(pos, annotations.RuleDirectiveMisplaced, "//hotkey:cache must be on a struct type, not on "+what)
						}
					}
					continue
				}
				// Inside type ( ... ) a directive above the group would
				// apply to every type in it: make the user choose.
				grouped := decl.Lparen.IsValid() && len(decl.Specs) > 1
				if pos, ok := directivePos(in.Fset, decl.Doc); ok && grouped {
					claim(decl.Doc)
					errs.Add(pos, annotations.RuleDirectiveMisplaced, "//hotkey:cache above a type ( ... ) group; move it to the doc comment of the type it is for")
				}
				for _, s := range decl.Specs {
					ts := s.(*ast.TypeSpec)
					groups := []*ast.CommentGroup{ts.Doc}
					if !grouped {
						groups = append(groups, decl.Doc)
					}
					pos, ok := claim(groups...)
					if !ok {
						continue
					}
					t, err := targetOf(in, ts, pos, groups)
					errs = append(errs, err...)
					if t != nil {
						targets = append(targets, *t)
					}
				}
			case *ast.FuncDecl:
				if pos, ok := claim(decl.Doc); ok {
					what := "func " + decl.Name.Name
					if decl.Recv != nil {
						what = "method " + decl.Name.Name
					}
					errs.Add(pos, annotations.RuleDirectiveMisplaced, "//hotkey:cache must be on a struct type, not on "+what)
				}
			}
		}
		if len(pending) == 0 {
			continue
		}
		// What is left documents a field, a type inside a function, or
		// nothing at all.
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if pos, ok := claim(n.Doc); ok {
					name := "an embedded field"
					if len(n.Names) > 0 {
						name = "field " + n.Names[0].Name
					}
					errs.Add(pos, annotations.RuleDirectiveMisplaced, "//hotkey:cache must be on a struct type, not on "+name)
				}
			case *ast.TypeSpec:
				if pos, ok := claim(n.Doc); ok {
					errs.Add(pos, annotations.RuleDirectiveMisplaced, fmt.Sprintf("//hotkey:cache must be on a package-level type; %s is declared inside a function", n.Name.Name))
				}
			case *ast.GenDecl:
				pos, ok := claim(n.Doc)
				switch {
				case !ok:
				case n.Tok == token.TYPE:
					errs.Add(pos, annotations.RuleDirectiveMisplaced, fmt.Sprintf("//hotkey:cache must be on a package-level type; %s is declared inside a function", n.Specs[0].(*ast.TypeSpec).Name.Name))
				default:
					errs.Add(pos, annotations.RuleDirectiveMisplaced, fmt.Sprintf("//hotkey:cache must be on a struct type, not on %s", n.Tok))
				}
			}
			return true
		})
		for _, cg := range f.Comments {
			if pos, ok := directivePos(in.Fset, cg); ok && pending[cg] {
				errs.Add(pos, annotations.RuleDirectiveMisplaced, "//hotkey:cache is not in a doc comment; put it on the lines directly above a struct type")
			}
		}
	}
	return targets, errs
}

// targetOf checks that ts, documented by groups with a directive at pos,
// is a struct type a repository can store, and parses its directives.
func targetOf(in *pkgInput, ts *ast.TypeSpec, pos token.Position, groups []*ast.CommentGroup) (*target, ErrorList) {
	var errs ErrorList
	name := ts.Name.Name
	obj, _ := in.Types.Scope().Lookup(name).(*types.TypeName)
	switch {
	case obj == nil:
		errs.Add(pos, annotations.RulePackageError, fmt.Sprintf("//hotkey:cache: type %s did not type-check", name))
		return nil, errs
	case ts.Assign.IsValid():
		errs.Add(pos, annotations.RuleDirectiveMisplaced, fmt.Sprintf("//hotkey:cache cannot be on alias %s; put it on the type the alias names", name))
		return nil, errs
	case ts.TypeParams != nil:
		errs.Add(pos, annotations.RuleDirectiveMisplaced, fmt.Sprintf("//hotkey:cache cannot be on generic type %s: a repository stores one concrete type; declare one, as in type Int%s %s[int], and annotate that", name, name, name))
		return nil, errs
	}
	under := obj.Type().Underlying()
	if b, ok := under.(*types.Basic); ok && b.Kind() == types.Invalid {
		errs = append(errs, typeErrorsNear(in, pos, in.Fset.Position(ts.End()))...)
		errs.Add(pos, annotations.RulePackageError, fmt.Sprintf("//hotkey:cache: type %s does not type-check", name))
		return nil, errs
	}
	if _, ok := under.(*types.Struct); !ok {
		errs.Add(pos, annotations.RuleDirectiveMisplaced, fmt.Sprintf("//hotkey:cache must be on a struct type; %s is %s", name, types.TypeString(under, qualifier(in.Types))))
		return nil, errs
	}
	spec, err := annotations.Parse(in.Fset, groups...)
	switch {
	case err != nil:
		errs = annotationErrors(err)
		if spec != nil {
			// The template's fields are checked too, so that a typo in
			// one option does not hide a misspelt field until the next run.
			_, _, kerrs := buildKey(in, under.(*types.Struct), target{Obj: obj, Spec: spec})
			errs = append(errs, kerrs...)
		}
		return nil, errs
	case spec == nil: // not ours after all; annotations has the last word
		return nil, nil
	}
	return &target{Obj: obj, Spec: spec}, nil
}

// misspelt warns about every comment of in's files that looks like a
// //hotkey:cache directive but is not read as one (see
// annotations.Misspelt).
func misspelt(in *pkgInput) ErrorList {
	var warns ErrorList
	for _, f := range in.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				want, ok := annotations.Misspelt(c.Text)
				if !ok {
					continue
				}
				text := c.Text
				if len(text) > 40 {
					text = text[:40] + "…"
				}
				warns.Add(in.Fset.Position(c.Slash), annotations.RuleDirectiveMisspelt, fmt.Sprintf("warning: %q is not a directive hotkeygen reads, so it is ignored; did you mean %s?", text, want))
			}
		}
	}
	return warns
}

// directivePos returns the position of the first line of cg that is in the
// hotkey namespace, well-formed or not. It applies the annotations
// package's rule: after "//" and optional spaces, "hotkey:".
func directivePos(fset *token.FileSet, cg *ast.CommentGroup) (token.Position, bool) {
	if cg == nil {
		return token.Position{}, false
	}
	for _, c := range cg.List {
		body, ok := strings.CutPrefix(c.Text, "//")
		if ok && strings.HasPrefix(strings.TrimLeft(body, " \t"), "hotkey:") {
			return fset.Position(c.Slash), true
		}
	}
	return token.Position{}, false
}

// annotationErrors converts what annotations.Parse returns.
func annotationErrors(err error) ErrorList {
	var list annotations.ErrorList
	if errors.As(err, &list) {
		errs := make(ErrorList, len(list))
		for i, e := range list {
			errs[i] = &Error{Pos: e.Pos, Rule: e.Rule, Msg: e.Msg}
		}
		return errs
	}
	var one *annotations.Error
	if errors.As(err, &one) {
		return ErrorList{{Pos: one.Pos, Rule: one.Rule, Msg: one.Msg}}
	}
	return ErrorList{{Rule: annotations.RuleInternalError, Msg: err.Error()}}
}

// typeErrorsNear returns in's type errors between from and to, in the same
// file: when a type the generator reads is broken, those say why.
func typeErrorsNear(in *pkgInput, from, to token.Position) ErrorList {
	var errs ErrorList
	for _, e := range in.TypeErrors {
		p := parsePos(e.Pos)
		if p.Filename == from.Filename && p.Line >= from.Line && p.Line <= to.Line {
			errs.Add(p, annotations.RulePackageError, e.Msg)
		}
	}
	return errs
}

// qualifier writes types of other packages by package name, the way a Go
// programmer reads them in messages: "geo.Point", "[]time.Time".
func qualifier(self *types.Package) types.Qualifier {
	return func(p *types.Package) string {
		if p == self {
			return ""
		}
		return p.Name()
	}
}
