package generator

import (
	"go/token"
	"go/types"
	"unicode"
	"unicode/utf8"
)

// lowerIdent turns an exported name into the unexported one a Go
// programmer would write: the leading capitals are lowered, except the last
// one when it starts the next word ("ID" → "id", "UserID" → "userID",
// "HTTPCode" → "httpCode"). It names parameters after key fields and the
// entity in stats ("OrderLine" → "orderLine").
func lowerIdent(s string) string {
	runes := []rune(s)
	n := 0 // leading upper-case runes
	for n < len(runes) && unicode.IsUpper(runes[n]) {
		n++
	}
	if n > 1 && n < len(runes) && unicode.IsLower(runes[n]) {
		n-- // the last capital begins the next word
	}
	for i := range n {
		runes[i] = unicode.ToLower(runes[i])
	}
	return string(runes)
}

// upperFirst capitalises the first letter, so that an unexported type or a
// name= written in lower case still yields exported generated names.
func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// paramNames names the parameters of the key fields, in order: each field's
// name with a lower first word, with "_" appended while the name is taken.
// Taken names are Go's keywords and predeclared identifiers (the key
// function calls len, append and conversions), the names the generated
// methods use themselves, the file's import names, and earlier parameters.
func paramNames(fields []string, imports []string) []string {
	taken := map[string]bool{"ctx": true, "r": true, "v": true, "b": true}
	for _, name := range types.Universe.Names() {
		taken[name] = true
	}
	for _, name := range imports {
		taken[name] = true
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		name := lowerIdent(f)
		for taken[name] || token.IsKeyword(name) {
			name += "_"
		}
		taken[name] = true
		names[i] = name
	}
	return names
}
