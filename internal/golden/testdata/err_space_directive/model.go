package model

// User's directive has a space after the slashes, so go doc reads it as
// prose.
//
// hotkey:cache key=user:{ID}
type User struct{ ID int64 }
