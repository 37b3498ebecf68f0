package generator

import (
	"fmt"
	"go/token"
	"go/types"
	"unicode/utf8"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// keyPart is literal key text or a parameter.
type keyPart struct {
	Lit   string
	Param *param
}

// keyKind says how a key field is appended to the key.
type keyKind int

const (
	keyString keyKind = iota // append(b, s...)
	keyInt                   // strconv.AppendInt
	keyUint                  // strconv.AppendUint
)

// param is a key field and the parameter that carries it.
type param struct {
	Name  string         // "tenant"
	Field string         // "Tenant"
	Type  types.Type     // the field's type as declared: named types are kept
	Pos   token.Position // the field's first appearance in the template
	Kind  keyKind
	// Exact reports that Type is the kind's own type (string, int64,
	// uint64), so the key code needs no conversion.
	Exact bool
}

// buildKey models t's key template: its parts, and its fields as
// parameters in order of first appearance. targetOf calls it too, for a
// directive with other problems, so that one run reports them all.
func buildKey(in *pkgInput, st *types.Struct, t target) ([]keyPart, []*param, ErrorList) {
	var key []keyPart
	var params []*param
	var errs ErrorList
	byField := map[string]*param{}
	for _, part := range t.Spec.Key.Parts {
		if part.Field == "" {
			key = append(key, keyPart{Lit: part.Lit})
			continue
		}
		p, ok := byField[part.Field]
		if !ok {
			var perr *Error
			p, perr = keyParam(in, st, t, part.Field, part.Pos)
			if perr != nil {
				errs = append(errs, perr)
				continue
			}
			byField[part.Field] = p
			params = append(params, p)
		}
		key = append(key, keyPart{Param: p})
	}
	return key, params, errs
}

// keyParam checks that the struct has the field a template names, with a
// type a key can hold, stored in the value so that it survives the round
// trip through Redis.
func keyParam(in *pkgInput, st *types.Struct, t target, field string, pos token.Position) (*param, *Error) {
	raw, typeName := t.Spec.Key.Raw, t.Obj.Name()
	var f *types.Var
	var names []string
	for i := range st.NumFields() {
		names = append(names, st.Field(i).Name())
		if st.Field(i).Name() == field {
			f = st.Field(i)
		}
	}
	if f == nil {
		msg := fmt.Sprintf("%s: the struct %s has no field %s", raw, typeName, field)
		if guess := annotations.Closest(field, names); guess != "" {
			msg += fmt.Sprintf("; did you mean %s?", guess)
		} else if len(names) > 0 {
			msg += "; its fields are " + joinAnd(names)
		}
		return nil, &Error{Pos: pos, Rule: annotations.RuleFieldMissing, Msg: msg}
	}
	if !f.Exported() {
		return nil, &Error{Pos: pos, Rule: annotations.RuleFieldInvalid, Msg: fmt.Sprintf("%s: field %s of %s is unexported, so msgpack does not store it and every read would return it empty; export it", raw, field, typeName)}
	}
	for i := range st.NumFields() {
		if st.Field(i) == f && msgpackName(st.Tag(i)) == "-" {
			return nil, &Error{Pos: pos, Rule: annotations.RuleFieldInvalid, Msg: fmt.Sprintf(`%s: field %s of %s is tagged msgpack:"-", so it is not stored and every read would return it empty; remove the tag, as the key needs the field in the value`, raw, field, typeName)}
		}
	}
	p := &param{Field: field, Type: f.Type(), Pos: pos}
	b, _ := f.Type().Underlying().(*types.Basic)
	switch {
	case b == nil:
	case b.Kind() == types.Invalid:
		return nil, &Error{Pos: pos, Rule: annotations.RulePackageError, Msg: fmt.Sprintf("%s: the type of %s.%s does not type-check", raw, typeName, field)}
	case b.Info()&types.IsString != 0:
		p.Kind, p.Exact = keyString, types.Identical(f.Type(), types.Typ[types.String])
		return p, nil
	case b.Info()&types.IsUnsigned != 0:
		p.Kind, p.Exact = keyUint, types.Identical(f.Type(), types.Typ[types.Uint64])
		return p, nil
	case b.Info()&types.IsInteger != 0:
		p.Kind, p.Exact = keyInt, types.Identical(f.Type(), types.Typ[types.Int64])
		return p, nil
	}
	return nil, &Error{Pos: pos, Rule: annotations.RuleFieldInvalid, Msg: fmt.Sprintf("%s: field %s of %s has type %s; a key field must be a string or an integer, or a named type based on one",
		raw, field, typeName, types.TypeString(f.Type(), qualifier(in.Types)))}
}

// keySpecial is the special argument of runtime.AppendKeyString for e's
// string parts: "%", which escapes, and every other ASCII byte of the
// template's literal text that is not a letter or a digit, sorted. With
// those escaped, a string part cannot hold the punctuation that separates
// it from the next part, so where the template separates its fields with
// punctuation, two different keys never build the same Redis key
// ("acct:{Org}:{User}" escapes "%:": Org "a:b" and User "c" give
// "acct:a%3Ab:c", Org "a" and User "b:c" "acct:a:b%3Ac"). Letters, digits
// and bytes beyond ASCII are left alone, to keep keys readable, and
// because runtime.AppendKeyString matches special as runes.
func keySpecial(e *entity) string {
	var set [utf8.RuneSelf]bool
	set['%'] = true
	for _, part := range e.Key {
		for i := range len(part.Lit) {
			if c := part.Lit[i]; c < utf8.RuneSelf && !isAlnum(c) {
				set[c] = true
			}
		}
	}
	var b []byte
	for c, ok := range set {
		if ok {
			b = append(b, byte(c))
		}
	}
	return string(b)
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
