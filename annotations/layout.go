package annotations

import (
	"go/token"
	"strings"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// fieldRef reads the struct field an option names, written {Field} as in
// a key template or bare, and where the name starts; the generator checks
// that the struct has it.
func fieldRef(v string, at func(int) token.Position) (string, token.Position) {
	if inner, ok := strings.CutPrefix(v, "{"); ok {
		if inner, ok = strings.CutSuffix(inner, "}"); ok {
			return inner, at(1)
		}
	}
	return v, at(0)
}

// validateLayout reports the options of a collection (layout=hash) that
// are missing, or written without one, at their arguments. The fields
// they name are the generator's to check, since that needs the struct.
func (s *Spec) validateLayout(errs *ErrorList, failed map[string]bool) {
	if failed["layout"] {
		return
	}
	if s.Layout != runtime.LayoutHash {
		for _, name := range []string{"field", "expires"} {
			if a, ok := s.Arg(name); ok {
				errs.add(a.Pos, RuleConfigInvalid, "%s: applies only to a collection stored as a hash; add layout=hash, or remove %s", name, name)
			}
		}
		return
	}
	// The change buffer and the Bloom filter reload and guard single rows;
	// a collection's loader returns a whole owner, which neither knows.
	for name, on := range map[string]bool{"changes": s.Changes, "bloom": s.Bloom} {
		if a, ok := s.Arg(name); ok && on {
			errs.add(a.Pos, RuleConfigInvalid, "%s=on is not supported for a collection (layout=hash) yet; remove %s, or keep the rows in a layout=string entity", name, name)
		}
	}
	if _, ok := s.Arg("field"); !ok && !failed["field"] {
		a, _ := s.Arg("layout")
		errs.add(a.Pos, RuleOptionMissing, "layout=hash needs field= naming the struct field that tells the items of one collection apart, as in field={Token}")
	}
}
