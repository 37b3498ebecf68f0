// Package names has key fields whose natural parameter names are taken,
// and a package-level name that an import would take.
package names

// Item is keyed by fields named like keywords, builtins and the names the
// generated methods use.
//
//hotkey:cache key=item:{Type}:{Len}:{R}:{Ctx}:{ID}:{URL}:{ID}
type Item struct {
	Type string
	Len  int
	R    uint8
	Ctx  string
	ID   int32
	URL  string
	Body string
}

// strconv is a package-level name, so the generated file imports the
// strconv package under another name.
var strconv = "taken"
