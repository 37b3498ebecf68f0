package model

// User would get a UserKey function, which exists already.
//
//hotkey:cache key=user:{ID}
type User struct{ ID int64 }

// UserKey is the user's own.
func UserKey(id int64) string { return "" }
