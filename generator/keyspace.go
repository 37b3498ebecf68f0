package generator

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// keyClashes reports every pair of a package's templates that can produce
// the same Redis key, at the later one: the same literal text around the
// same number of fields, whatever the fields are named (user:{ID} and
// user:{Name} both give user:5). Two such entities would read and
// overwrite each other's values. Templates whose literal text differs
// cannot meet: a prefix must end in punctuation, and string fields are
// escaped wherever they hold the template's punctuation, so user:{ID}
// beside user:{ID}:settings stays apart.
func keyClashes(targets []target) ErrorList {
	sorted := slices.Clone(targets)
	slices.SortFunc(sorted, func(a, b target) int {
		return cmp.Or(cmp.Compare(a.Spec.Pos.Filename, b.Spec.Pos.Filename), cmp.Compare(a.Spec.Pos.Line, b.Spec.Pos.Line))
	})
	var errs ErrorList
	first := map[string]target{}
	for _, t := range sorted {
		shape := keyShape(t.Spec.Key)
		other, clash := first[shape]
		if !clash {
			first[shape] = t
			continue
		}
		pos := t.Spec.Pos
		if a, ok := t.Spec.Arg("key"); ok {
			pos = a.Pos
		}
		errs.Add(pos, fmt.Sprintf("key=%s can produce the same Redis keys as key=%s of %s at %s, so each would read and overwrite the other's values; give one a prefix of its own, as in %s",
			t.Spec.Key.Raw, other.Spec.Key.Raw, other.Obj.Name(), posFrom(pos, other.Spec.Pos), suggestPrefix(t)))
	}
	return errs
}

// keyShape is a template's literal text with each field replaced by {}.
func keyShape(t annotations.Template) string {
	var b strings.Builder
	for _, p := range t.Parts {
		if p.Field != "" {
			b.WriteString("{}")
		} else {
			b.WriteString(p.Lit)
		}
	}
	return b.String()
}

// suggestPrefix proposes t's template with the type's name, lowered, as
// its prefix.
func suggestPrefix(t target) string {
	rest := t.Spec.Key.Raw
	if parts := t.Spec.Key.Parts; len(parts) > 0 && parts[0].Field == "" {
		rest = strings.TrimPrefix(rest, parts[0].Lit)
	}
	return lowerIdent(t.Obj.Name()) + ":" + rest
}
