package generator

import (
	"fmt"
	"go/types"

	"github.com/hotkeygen/hotkeygen/annotations"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// collection is what layout=hash adds to an entity: the repository keeps
// one Redis hash per key, holding items under the field Field gives, and
// Expires names the time.Time field of each item's own expiry ("" for
// none).
type collection struct {
	Field   *param
	Expires string
	// ExpiresKey is Expires's key in the item's msgpack map: its msgpack
	// tag's name, or its own.
	ExpiresKey string
}

// buildCollection checks the fields a layout=hash directive names: field=
// must be a field a key can hold (as a key template's are), stored in the
// value, and not one of the key's own, which are the same for every item
// of a collection; expires= must be a stored time.Time field.
func buildCollection(in *pkgInput, st *types.Struct, t target, key []*param) (*collection, ErrorList) {
	var errs ErrorList
	s := t.Spec
	if s.Layout != runtime.LayoutHash {
		return nil, nil
	}
	col := &collection{Expires: s.Expires}
	// keyParam words its messages after the template; here they are the
	// option's.
	spec := *s
	spec.Key.Raw = "field=" + s.Field
	field, perr := keyParam(in, st, target{Obj: t.Obj, Spec: &spec}, s.Field, s.FieldPos)
	switch {
	case perr != nil:
		errs = append(errs, perr)
	default:
		for _, p := range key {
			if p.Field == field.Field {
				errs.Add(s.FieldPos, annotations.RuleFieldInvalid, fmt.Sprintf("field=%s: %s is part of the key template %s, so every item of a collection has the same one; name the field that tells the items apart, such as an ID or a token", s.Field, s.Field, s.Key.Raw))
			}
		}
		col.Field = field
	}
	if s.Expires != "" {
		var eerrs ErrorList
		col.ExpiresKey, eerrs = expiresField(st, t, s)
		errs = append(errs, eerrs...)
	}
	return col, errs
}

// expiresField checks that expires= names a stored time.Time field, and
// returns its key in the item's msgpack map.
func expiresField(st *types.Struct, t target, s *annotations.Spec) (string, ErrorList) {
	var errs ErrorList
	var names []string
	for i := range st.NumFields() {
		f := st.Field(i)
		names = append(names, f.Name())
		if f.Name() != s.Expires {
			continue
		}
		named, ok := f.Type().(*types.Named)
		switch {
		case !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != "time" || named.Obj().Name() != "Time":
			errs.Add(s.ExpiresPos, annotations.RuleFieldInvalid, fmt.Sprintf("expires=%s: field %s of %s has type %s; it must be a time.Time, the instant the item expires", s.Expires, s.Expires, t.Obj.Name(), types.TypeString(f.Type(), nil)))
		case !f.Exported() || msgpackName(st.Tag(i)) == "-":
			errs.Add(s.ExpiresPos, annotations.RuleFieldInvalid, fmt.Sprintf("expires=%s: field %s of %s is not stored (unexported, or tagged msgpack:\"-\"), so every item read back would have no expiry; store it", s.Expires, s.Expires, t.Obj.Name()))
		}
		if name := msgpackName(st.Tag(i)); name != "" {
			return name, errs
		}
		return f.Name(), errs
	}
	msg := fmt.Sprintf("expires=%s: the struct %s has no field %s", s.Expires, t.Obj.Name(), s.Expires)
	if guess := annotations.Closest(s.Expires, names); guess != "" {
		msg += fmt.Sprintf("; did you mean %s?", guess)
	}
	errs.Add(s.ExpiresPos, annotations.RuleFieldMissing, msg)
	return "", errs
}
