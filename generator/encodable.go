package generator

import (
	"fmt"
	"go/types"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// unencodable reports every field of the annotated struct, at the field,
// whose value msgpack cannot encode: a func, a chan, an unsafe.Pointer, a
// complex number or a uintptr, directly or anywhere inside the field's
// type. Left alone, it would generate a repository whose every write fails
// at run time (or, for a uintptr, panics inside msgpack), even when the
// field is nil and tagged omitempty, since msgpack asks a func or a chan
// for its encoder before it asks whether the value is empty.
func unencodable(in *pkgInput, named *types.Named) ErrorList {
	var errs ErrorList
	st := named.Underlying().(*types.Struct)
	for i := range st.NumFields() {
		f := st.Field(i)
		if !stored(f, st.Tag(i)) {
			continue
		}
		path, bad := findUnencodable(f.Type(), f.Name(), map[types.Type]bool{named: true})
		if bad == nil {
			continue
		}
		qual := qualifier(in.Types)
		what := fmt.Sprintf("field %s has type %s", f.Name(), types.TypeString(bad, qual))
		if path != f.Name() {
			what = fmt.Sprintf("field %s (%s) holds %s of type %s", f.Name(), types.TypeString(f.Type(), qual), path, types.TypeString(bad, qual))
		}
		errs.Add(in.Fset.Position(f.Pos()), annotations.RuleUnencodableField, fmt.Sprintf(
			`%s, which msgpack cannot encode, so writes of %s would fail; tag the field msgpack:"-" to keep it out of Redis, or give its type an EncodeMsgpack method`,
			what, named.Obj().Name()))
	}
	return errs
}

// stored reports whether msgpack's reflection writes field f, with struct
// tag tag, into the value: exported or embedded, and not tagged "-".
func stored(f *types.Var, tag string) bool {
	return (f.Exported() || f.Embedded()) && msgpackName(tag) != "-"
}

// findUnencodable returns the first type msgpack cannot encode that a
// value of t may hold, and the Go path to it from name ("Meta.Hooks[]"),
// or a nil type. Types that encode themselves (EncodeMsgpack and the other
// methods msgpack prefers) and interfaces, whose dynamic value decides,
// are taken as encodable. seen stops at types already being walked.
func findUnencodable(t types.Type, name string, seen map[types.Type]bool) (string, types.Type) {
	t = types.Unalias(t)
	if seen[t] {
		return "", nil
	}
	if _, ok := t.(*types.Named); ok {
		if encodesItself(t) {
			return "", nil
		}
		seen[t] = true
		defer delete(seen, t)
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch u.Kind() {
		case types.Complex64, types.Complex128, types.UnsafePointer, types.Uintptr, types.UntypedNil:
			return name, t
		}
	case *types.Signature, *types.Chan:
		return name, t
	case *types.Pointer:
		return findUnencodable(u.Elem(), name, seen)
	case *types.Slice:
		return findUnencodable(u.Elem(), name+"[]", seen)
	case *types.Array:
		return findUnencodable(u.Elem(), name+"[]", seen)
	case *types.Map:
		if path, bad := findUnencodable(u.Key(), name+"[key]", seen); bad != nil {
			return path, bad
		}
		return findUnencodable(u.Elem(), name+"[]", seen)
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i)
			if !stored(f, u.Tag(i)) {
				continue
			}
			if path, bad := findUnencodable(f.Type(), name+"."+f.Name(), seen); bad != nil {
				return path, bad
			}
		}
	}
	return "", nil
}
