package generator

import (
	"go/token"
	"go/types"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TypeName is the annotated struct's own name, which doc comments and
// messages speak of; Name, which the generated names are built on, is
// name= when the annotation sets it.
func (e *entity) TypeName() string { return e.Type.Obj().Name() }

// Repo, Ctor and the others name an entity's generated declarations.
// KeyName is the key function of a single-field key, and the key struct of
// a composite one.
func (e *entity) Repo() string     { return e.Name + "Repo" }
func (e *entity) Ctor() string     { return "New" + e.Name + "Repo" }
func (e *entity) MustCtor() string { return "MustNew" + e.Name + "Repo" }
func (e *entity) KeyName() string  { return e.Name + "Key" }

// keyMethod is the method of a composite key's struct that builds the
// Redis key (the runtime's Glue.Key); it makes the struct a fmt.Stringer,
// so a key prints as the Redis key it stands for.
const keyMethod = "String"

// Get, GetMany, Set, Del and the loader options are named after the
// entity, the batch ones after many of it (see manyName): GetUser,
// GetUsers, SetUser, DelUser, WithUserLoader, WithUsersLoader.
func (e *entity) Get() string         { return "Get" + e.Name }
func (e *entity) View() string        { return "View" + e.Name }
func (e *entity) GetMany() string     { return "Get" + manyName(e.Name) }
func (e *entity) Set() string         { return "Set" + e.Name }
func (e *entity) Del() string         { return "Del" + e.Name }
func (e *entity) Loader() string      { return "With" + e.Name + "Loader" }
func (e *entity) BatchLoader() string { return "With" + manyName(e.Name) + "Loader" }

// MarkChanged, SyncHook and WarmBloom name what changes=on and bloom=on
// add: MarkUserChanged, WithUserSyncHook, WarmUserBloom.
func (e *entity) MarkChanged() string { return "Mark" + e.Name + "Changed" }
func (e *entity) SyncHook() string    { return "With" + e.Name + "SyncHook" }
func (e *entity) WarmBloom() string   { return "Warm" + e.Name + "Bloom" }

// Collection names (layout=hash): the whole collection is many of the
// entity, and each method is named after the Redis command it runs, so
// the generated file says what reaches Redis: HGetAllTokens, HGetToken,
// HSetToken, HSetTokens, HDelToken, DelTokens, HGetAllTokensMany,
// TokenField and WithTokensLoader (BatchLoader).
func (e *entity) HGetAll() string     { return "HGetAll" + manyName(e.Name) }
func (e *entity) HGetAllMany() string { return "HGetAll" + manyName(e.Name) + "Many" }
func (e *entity) HGet() string        { return "HGet" + e.Name }
func (e *entity) HSet() string        { return "HSet" + e.Name }
func (e *entity) HSetMany() string    { return "HSet" + manyName(e.Name) }
func (e *entity) HDel() string        { return "HDel" + e.Name }
func (e *entity) DelAll() string      { return "Del" + manyName(e.Name) }
func (e *entity) FieldName() string   { return e.Name + "Field" }

// generatedName is a package-level name the generated file declares, and
// what it names, for messages.
type generatedName struct{ Name, What string }

// generatedNames are an entity's package-level names, which must not be
// declared already.
func (e *entity) generatedNames() []generatedName {
	key := "key function"
	if e.Composite() {
		key = "key struct"
	}
	names := []generatedName{
		{e.Repo(), "repository type"},
		{e.Ctor(), "constructor"},
		{e.MustCtor(), "MustNew constructor"},
		{e.KeyName(), key},
	}
	if e.Collection != nil {
		return append(names,
			generatedName{e.FieldName(), "field function"},
			generatedName{e.BatchLoader(), "collection loader option"},
		)
	}
	names = append(names,
		generatedName{e.Loader(), "loader option"},
		generatedName{e.BatchLoader(), "batch loader option"},
	)
	if e.Changes {
		names = append(names, generatedName{e.SyncHook(), "sync hook option"})
	}
	return names
}

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

// takenNames are the names a parameter must not have: Go's keywords are
// checked apart; these are the predeclared identifiers (the key function
// calls len, append and conversions), the names the generated functions
// use themselves, and the file's import names, which a parameter would
// shadow.
func takenNames(imports []string) map[string]bool {
	taken := map[string]bool{"ctx": true, "r": true, "v": true, "b": true, "load": true}
	for _, name := range types.Universe.Names() {
		taken[name] = true
	}
	for _, name := range imports {
		taken[name] = true
	}
	return taken
}

// freeName returns name, with "_" appended while it is taken or a keyword,
// and marks the result taken.
func freeName(name string, taken map[string]bool) string {
	for taken[name] || token.IsKeyword(name) {
		name += "_"
	}
	taken[name] = true
	return name
}

// paramNames names the parameters of the key fields, in order: each field's
// name with a lower first word, with "_" appended while the name is taken
// (see takenNames) or is an earlier parameter's.
func paramNames(fields []string, imports []string) []string {
	taken := takenNames(imports)
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = freeName(lowerIdent(f), taken)
	}
	return names
}

// manyParamName names the parameter of the batch methods, which holds
// many keys: the plural of the key field's parameter ("ids" for ID), or
// "keys" for a key of several fields, whose values are key structs. It
// avoids the same names as paramNames.
func manyParamName(fields []string, imports []string) string {
	name := "keys"
	if len(fields) == 1 {
		name = manyName(lowerIdent(fields[0]))
	}
	return freeName(name, takenNames(imports))
}

// manyName is the name of many of name, for the batch API (GetUsers,
// WithUsersLoader): its plural, or name+"List" when the plural is the word
// itself (News gives NewsList), so the two never read the same.
func manyName(name string) string {
	if p := plural(name); p != name {
		return p
	}
	return name + "List"
}

// plural makes an English plural of the last word of an identifier, with
// rules simple enough to predict rather than a dictionary:
//
//   - a name ending in a capital or a digit (ID, Item2) gets "s": IDs;
//   - one ending in "ss", "x", "z", "ch" or "sh" gets "es": Address gives
//     Addresses, Box Boxes, Match Matches;
//   - any other name ending in "s" is taken as plural already, or as a
//     word like News or Series that is its own plural, and is unchanged;
//   - a consonant and "y" become "ies": Category gives Categories, while
//     Day gives Days;
//   - anything else gets "s": User gives Users, Person Persons.
func plural(name string) string {
	last, _ := utf8.DecodeLastRuneInString(name)
	switch lower := strings.ToLower(name); {
	case name == "":
		return ""
	case unicode.IsUpper(last) || unicode.IsDigit(last):
		return name + "s"
	case strings.HasSuffix(lower, "ss"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "z"),
		strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return name + "es"
	case strings.HasSuffix(lower, "s"):
		return name
	case strings.HasSuffix(lower, "y") && len(lower) > 1 && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return name[:len(name)-1] + "ies"
	}
	return name + "s"
}

// joinAnd joins words as English does: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
