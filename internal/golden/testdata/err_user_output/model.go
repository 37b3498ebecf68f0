package model

// User is fine, but hotkey_gen.go is someone else's file.
//
//hotkey:cache key=user:{ID}
type User struct{ ID int64 }
