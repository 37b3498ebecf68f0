// Package members keys entities by strings that may hold the key
// template's own separators: escaping keeps every entity's Redis key its
// own.
package members

// OrgName is a named type based on string: it is escaped like a string.
type OrgName string

// Member is a user's membership of an organisation.
//
//hotkey:cache key=acct:{Org}:{User}
type Member struct {
	Org  OrgName
	User string
	Role string
}

// Page is keyed by a path-like name and a revision; integers need no
// escaping.
//
//hotkey:cache key=page/{Name}/rev-{Rev}
type Page struct {
	Name string
	Rev  int
	Body string
}

// Handle is keyed by one string field, so its key function takes the
// string itself.
//
//hotkey:cache key=user/{Name}
type Handle struct {
	Name  string
	Owner int64
}
