package annotations

import (
	"go/ast"
	"go/token"
	"strings"
	"unicode"
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
// skipped. It returns (nil, nil) when no group holds a hotkey directive.
// Otherwise a problem is returned in an ErrorList of every problem, along
// with the Spec as far as it could be read (nil when no line was
// well-formed): nothing may be generated from it, but its Key, when set,
// lets the generator check the template's fields in the same run.
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
		r.errs.add(pos, RuleDirectiveMalformed, "malformed directive: remove the space in %q", "//"+space+directive)
		return
	}
	if name := directive[len(namespace):]; name != cacheDirective {
		r.rejected = true
		if guess := Closest(name, []string{cacheDirective}); guess != "" {
			r.errs.add(pos, RuleDirectiveMalformed, "unknown directive //%s; did you mean //%s%s?", directive, namespace, guess)
		} else {
			r.errs.add(pos, RuleDirectiveMalformed, "unknown directive //%s; the only directive is //%s%s", directive, namespace, cacheDirective)
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
	// Combinations are judged even when some argument was wrong, so one
	// run reports every problem; an option that failed to parse keeps its
	// default, which follows the options that were written, and is not
	// blamed twice.
	if r.found {
		failed := map[string]bool{}
		for name := range r.set {
			if _, ok := r.spec.Arg(name); !ok {
				failed[name] = true
			}
		}
		r.spec.validate(&r.errs, failed)
	}
	if _, ok := r.set["key"]; !ok && !r.rejected {
		r.errs.add(r.spec.Pos, RuleOptionMissing, "//%s%s needs a key; add one like key=user:{ID}", namespace, cacheDirective)
	}
	var spec *Spec
	if r.found {
		spec = &r.spec
	}
	if len(r.errs) > 0 {
		r.errs.Sort()
		return spec, r.errs
	}
	return spec, nil
}

// Misspelt reports whether the comment text looks like a //hotkey:cache
// directive written in a way Parse does not take for one, and returns the
// directive it most likely meant. Parse reports every line in its own
// namespace; this catches the rest: a namespace a slip away from it
// (//hotkeys:cache, //HotKey:cache, //hot-key:cache, //hotkye:cache) or a
// missing colon (//hotkey-cache, or "// hotkey-cache key=…", as gofmt
// writes it). The generator warns about these, since
// a silently ignored directive leaves the user wondering why nothing was
// generated.
func Misspelt(text string) (string, bool) {
	body, ok := strings.CutPrefix(text, "//")
	if !ok {
		return "", false
	}
	rest := strings.TrimLeft(body, " \t")
	if strings.HasPrefix(rest, namespace) {
		return "", false // ours: Parse reports whatever is wrong with it
	}
	word := rest
	if end := strings.IndexAny(rest, " \t"); end >= 0 {
		word = rest[:end]
	}
	const longest = 2 * len(namespace+cacheDirective) // beyond it, no slip
	want := namespace + cacheDirective
	ns, _, colon := strings.Cut(word, ":")
	switch {
	case len(word) > longest || strings.ContainsFunc(word, notDirectiveRune):
		return "", false // prose, or a directive quoted in a comment
	case colon && Closest(ns, []string{strings.TrimSuffix(namespace, ":")}) != "":
	case !colon && (len(rest) == len(body) || strings.Contains(rest, " key=")) && Closest(word, []string{want}) != "":
		// Without a colon gofmt puts a space after the //, like prose:
		// a key= argument says it was meant as a directive.
	default:
		return "", false
	}
	return "//" + want, true
}

// notDirectiveRune reports a rune no directive name holds, such as the
// "/" of a directive quoted inside another comment.
func notDirectiveRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(":-_.", r)
}
