package annotations

import (
	"cmp"
	"fmt"
	"go/token"
	"strings"
)

// Template is a Redis key template such as "user:{ID}": literal text and
// references to fields of the annotated struct. Whether the fields exist and
// have a type that can appear in a key is for the generator to check with
// type information; each Part carries its position so it can report there.
type Template struct {
	// Raw is the template as written, after unquoting.
	Raw string
	// Parts is Raw cut into literal and field parts, in order; adjacent
	// literal text is always one part.
	Parts []Part
}

// Part is one piece of a Template: exactly one of Lit and Field is set.
type Part struct {
	// Lit is literal key text; it never contains "{" or "}".
	Lit string
	// Field names the struct field whose value goes here ("ID" for {ID}).
	Field string
	// Pos is where the part starts in the source: for a field, its "{".
	Pos token.Position
}

// Fields returns the field parts in order.
func (t Template) Fields() []Part {
	var fields []Part
	for _, p := range t.Parts {
		if p.Field != "" {
			fields = append(fields, p)
		}
	}
	return fields
}

// Errorf reports a problem with the part at its position, for checks only
// the generator can make ("{Nmae}: the struct has no field Nmae").
func (p Part) Errorf(rule Rule, format string, args ...any) *Error {
	return &Error{Pos: p.Pos, Rule: rule, Msg: fmt.Sprintf(format, args...)}
}

// parseTemplate cuts raw into parts; at maps a byte offset of raw to its
// position in the source. Brace problems are reported at the brace, the
// template's as a whole at the argument (an Error without a position).
func parseTemplate(raw string, at func(int) token.Position) (Template, error) {
	t := Template{Raw: raw}
	lit := 0 // start of the literal text not yet added
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '}':
			return Template{}, &Error{Pos: at(i), Rule: RuleKeyTemplateInvalid, Msg: `unmatched "}"; remove it or open a field with "{", as in {ID}`}
		case '{':
			n := strings.IndexAny(raw[i+1:], "{}")
			if n < 0 || raw[i+1+n] == '{' {
				return Template{}, &Error{Pos: at(i), Rule: RuleKeyTemplateInvalid, Msg: `unclosed "{"; close the field with "}", as in {ID}`}
			}
			field := raw[i+1 : i+1+n]
			if !token.IsIdentifier(field) {
				return Template{}, &Error{Pos: at(i), Rule: RuleKeyTemplateInvalid, Msg: fmt.Sprintf("{%s} does not name a field; write a Go field name of the struct, as in {ID}", field)}
			}
			if len(t.Fields()) == 0 && (i == 0 || !hasPunct(raw[i-1:i])) {
				return Template{}, &Error{Rule: RuleKeyTemplateInvalid, Msg: fmt.Sprintf("%q must start with a literal prefix ending in punctuation, as in %s:{%s}: without one, a caller's value could name any Redis key, another entity's included",
					raw, cmp.Or(raw[:i], "user"), field)}
			}
			if len(t.Fields()) > 0 && !hasPunct(raw[lit:i]) {
				return Template{}, &Error{Pos: at(i), Rule: RuleKeyTemplateInvalid, Msg: fmt.Sprintf("{%s} follows another field with no punctuation between them, so two entities could share one key; separate them, as in {A}:{%[1]s}", field)}
			}
			if lit < i {
				t.Parts = append(t.Parts, Part{Lit: raw[lit:i], Pos: at(lit)})
			}
			t.Parts = append(t.Parts, Part{Field: field, Pos: at(i)})
			i += n + 1
			lit = i + 1
		}
	}
	if lit < len(raw) {
		t.Parts = append(t.Parts, Part{Lit: raw[lit:], Pos: at(lit)})
	}
	if len(t.Fields()) == 0 {
		return Template{}, &Error{Rule: RuleKeyTemplateInvalid, Msg: fmt.Sprintf("%q has no {Field}, so every value would share one Redis key; include the identifying field, as in user:{ID}", raw)}
	}
	return t, nil
}

// hasPunct reports whether s holds an ASCII byte that is neither a letter
// nor a digit: such a byte can separate two fields, or a prefix from the
// first, because string fields are escaped wherever they hold it (see
// runtime.AppendKeyString).
func hasPunct(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 && !isAlnum(rune(c)) {
			return true
		}
	}
	return false
}

func isAlnum(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
