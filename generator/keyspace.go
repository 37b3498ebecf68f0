package generator

import (
	"cmp"
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// keyClashes reports every pair of templates of one run that can produce
// the same Redis key, at the later one: the same literal text around the
// same number of fields, whatever the fields are named (user:{ID} and
// user:{Name} both give user:5). Two such entities would read and
// overwrite each other's values. Templates whose literal text differs
// cannot meet: a prefix must end in punctuation, and string fields are
// escaped wherever they hold the template's punctuation, so user:{ID}
// beside user:{ID}:settings stays apart. Entities of different packages
// generated in one run (hotkeygen ./a ./b) are checked alike: they
// usually share one Redis. rel writes a path of another package.
func keyClashes(targets []target, rel func(string) string) ErrorList {
	var errs ErrorList
	first := map[string]target{}
	for _, t := range byPosition(targets) {
		shape := keyShape(t.Spec.Key, t.Spec.Version)
		other, clash := first[shape]
		if !clash {
			first[shape] = t
			continue
		}
		pos := argPos(t, "key")
		errs.Add(pos, annotations.RuleKeyClash, fmt.Sprintf("key=%s can produce the same Redis keys as key=%s of %s at %s, so each would read and overwrite the other's values; give one a prefix of its own, as in %s",
			t.Spec.Key.Raw, other.Spec.Key.Raw, other.nameFrom(t), where(pos, other.Spec.Pos, rel), suggestPrefix(t)))
	}
	return errs
}

// entityKeys are the Redis keys the runtime names after the entity, not
// after the key template (runtime/internal/changes, runtime/internal/bloom,
// internal/aggregate), and the option that turns each on. Two entities
// of one name in one run would share them, whatever their templates.
var entityKeys = []struct {
	option, what, keys, harm string
	on                       func(*annotations.Spec) bool
}{
	{"changes", "change buffer", "hotkeygen:changes:{%s}", "each would claim and sync the other's changed ids",
		func(s *annotations.Spec) bool { return s.Changes }},
	{"bloom", "Bloom filter", "hotkeygen:bloom:{%s:…}", "warming one would mark the other's filter ready, which then turns away rows it was never told of",
		func(s *annotations.Spec) bool { return s.Bloom }},
	{"aggregate", "cluster-wide counts", "hotkeygen:agg:%s:…", "each would count the other's reads",
		func(s *annotations.Spec) bool { return s.Aggregate }},
}

// sharedEntityKeys reports, at the later one, every pair of entities of
// one run that would share Redis keys named after the entity: the same
// entity name with the same feature on, as a User in two packages with
// changes=on. name= gives one of them a name of its own.
func sharedEntityKeys(targets []target, rel func(string) string) ErrorList {
	var errs ErrorList
	for _, k := range entityKeys {
		first := map[string]target{}
		for _, t := range byPosition(targets) {
			if !k.on(t.Spec) {
				continue
			}
			other, shared := first[t.entity()]
			if !shared {
				first[t.entity()] = t
				continue
			}
			pos := argPos(t, k.option)
			errs.Add(pos, annotations.RuleKeyClash, fmt.Sprintf("%s=on: the %s of %s would be the Redis keys %s, named after the entity %q as are those of %s at %s, so %s; set name= on one of them, as in name=%s",
				k.option, k.what, t.Obj.Name(), fmt.Sprintf(k.keys, t.entity()), t.entity(), other.nameFrom(t), where(pos, other.Spec.Pos, rel), k.harm, suggestName(t)))
		}
	}
	return errs
}

// byPosition sorts targets by file and line, so the later of two is the
// one reported, on every machine.
func byPosition(targets []target) []target {
	sorted := slices.Clone(targets)
	slices.SortFunc(sorted, func(a, b target) int {
		return cmp.Or(cmp.Compare(a.Spec.Pos.Filename, b.Spec.Pos.Filename), cmp.Compare(a.Spec.Pos.Line, b.Spec.Pos.Line))
	})
	return sorted
}

// argPos is where t's option is written, or t's directive when the
// option is not.
func argPos(t target, option string) token.Position {
	if a, ok := t.Spec.Arg(option); ok {
		return a.Pos
	}
	return t.Spec.Pos
}

// nameFrom names t's type in a message about from: bare within one
// package, qualified by its package's name from another.
func (t target) nameFrom(from target) string {
	if t.Obj.Pkg() == from.Obj.Pkg() {
		return t.Obj.Name()
	}
	return t.Obj.Pkg().Name() + "." + t.Obj.Name()
}

// where writes pos for a message reported at from: as posFrom does
// within a package's directory, and from another as a path rel makes
// relative to the run's directory, so messages read the same on every
// machine.
func where(from, pos token.Position, rel func(string) string) string {
	if filepath.Dir(from.Filename) == filepath.Dir(pos.Filename) {
		return posFrom(from, pos)
	}
	return fmt.Sprintf("%s:%d:%d", rel(pos.Filename), pos.Line, pos.Column)
}

// keyShape is a template's literal text with each field replaced by {},
// the first literal as version moves it (versionedKey): user:{ID} of
// version 2 is user:v2:{}, apart from version 1's user:{}.
func keyShape(t annotations.Template, version int) string {
	var b strings.Builder
	for i, p := range t.Parts {
		switch {
		case p.Field != "":
			b.WriteString("{}")
		case i == 0:
			b.WriteString(versionedKey(p.Lit, version))
		default:
			b.WriteString(p.Lit)
		}
	}
	return b.String()
}

// suggestName proposes a name= for t that holds its package's name
// (ShopOrder for Order in package shop), so its entity's keys are its own.
func suggestName(t target) string {
	return upperFirst(t.Obj.Pkg().Name()) + t.name()
}

// suggestPrefix proposes t's template with the type's name, lowered, as
// its prefix; when that is the prefix already (Order and order:{ID} in
// two packages), the package's name goes before it.
func suggestPrefix(t target) string {
	rest := t.Spec.Key.Raw
	if parts := t.Spec.Key.Parts; len(parts) > 0 && parts[0].Field == "" {
		rest = strings.TrimPrefix(rest, parts[0].Lit)
	}
	if s := lowerIdent(t.Obj.Name()) + ":" + rest; s != t.Spec.Key.Raw {
		return s
	}
	return t.Obj.Pkg().Name() + ":" + t.Spec.Key.Raw
}
