// Package stale has a generated file that no longer compiles: it names a
// field and imports a package that are gone. Regeneration must not mind.
package stale

// User lost its Nick field.
//
//hotkey:cache key=user:{ID}
type User struct {
	ID   int64
	Name string
}
