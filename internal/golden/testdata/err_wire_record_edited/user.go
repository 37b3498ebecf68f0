// Package accounts has a generated file whose record was edited by hand.
package accounts

// User is cached.
//
//hotkey:cache key=user:{ID}
type User struct {
	ID   int64
	Name string
}
