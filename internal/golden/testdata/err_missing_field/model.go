package model

// User's key names a field it does not have.
//
//hotkey:cache key=user:{Nmae}
type User struct {
	ID   int64
	Name string
}
