package annotations

import (
	"go/ast"
	"go/token"
	"strings"
)

const (
	// namespace prefixes every directive of this tool.
	namespace = "hotkey:"
	// cacheDirective marks a struct for a generated cache repository.
	cacheDirective = "cache"
)

// Parse reads the //hotkey:cache directives of a struct's doc comments and
// returns the merged, validated Spec. Pass both the GenDecl and the TypeSpec
// doc: inside type ( ... ) the doc sits on the TypeSpec. Nil groups are
// skipped. It returns (nil, nil) when no group holds a hotkey directive, and
// an ErrorList of every problem otherwise.
func Parse(fset *token.FileSet, groups ...*ast.CommentGroup) (*Spec, error) {
	r := newReader()
	read := map[*ast.CommentGroup]bool{}
	for _, g := range groups {
		if g == nil || read[g] {
			continue
		}
		read[g] = true
		// Text() drops directives, so read the raw comments.
		for _, c := range g.List {
			r.comment(fset.Position(c.Slash), c.Text)
		}
	}
	return r.finish()
}

// ParseLine is Parse for a single comment, such as ast.Comment.Text,
// starting at pos; it needs no go/ast. It returns (nil, nil) when text is
// not a hotkey directive.
func ParseLine(pos token.Position, text string) (*Spec, error) {
	r := newReader()
	r.comment(pos, text)
	return r.finish()
}

// reader merges the directive lines of one struct into a Spec.
type reader struct {
	spec Spec
	// found is set by the first well-formed //hotkey:cache line.
	found bool
	// rejected is set by a line in our namespace that could not be read at
	// all; it may hold the key, so a missing key is not reported.
	rejected bool
	// set records where each option was first written, to catch repeats.
	set  map[string]token.Position
	errs ErrorList
}

func newReader() *reader {
	return &reader{spec: newSpec(), set: map[string]token.Position{}}
}

// comment reads one comment written at pos, ignoring anything that is not
// in the hotkey namespace.
func (r *reader) comment(pos token.Position, text string) {
	body, ok := strings.CutPrefix(text, "//")
	if !ok {
		return
	}
	rest := strings.TrimLeft(body, " \t")
	if !strings.HasPrefix(rest, namespace) {
		return
	}
	directive := rest
	if end := strings.IndexAny(rest, " \t"); end >= 0 {
		directive = rest[:end]
	}
	if space := body[:len(body)-len(rest)]; space != "" {
		// Like go vet on "// go:build": with the space, gofmt and
		// go doc treat the line as prose, so it must not half-work.
		r.rejected = true
		r.errs.add(pos, "malformed directive: remove the space in %q", "//"+space+directive)
		return
	}
	if name := directive[len(namespace):]; name != cacheDirective {
		r.rejected = true
		if guess := Closest(name, []string{cacheDirective}); guess != "" {
			r.errs.add(pos, "unknown directive //%s; did you mean //%s%s?", directive, namespace, guess)
		} else {
			r.errs.add(pos, "unknown directive //%s; the only directive is //%s%s", directive, namespace, cacheDirective)
		}
		return
	}
	if !r.found {
		r.found = true
		r.spec.Pos = pos
	}
	r.args(pos, text, len("//")+len(directive))
}

// finish runs the checks that need every line and returns the result.
func (r *reader) finish() (*Spec, error) {
	if !r.found && !r.rejected {
		return nil, nil
	}
	// Combinations are judged only once every value parsed, so they never
	// blame a value that merely kept its default after a typo.
	if r.found && len(r.errs) == 0 {
		r.spec.validate(&r.errs)
	}
	if _, ok := r.set["key"]; !ok && !r.rejected {
		r.errs.add(r.spec.Pos, "//%s%s needs a key; add one like key=user:{ID}", namespace, cacheDirective)
	}
	if len(r.errs) > 0 {
		r.errs.Sort()
		return nil, r.errs
	}
	return &r.spec, nil
}
