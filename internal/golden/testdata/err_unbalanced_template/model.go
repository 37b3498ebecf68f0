package model

// User's key does not close its brace.
//
//hotkey:cache key=user:{ID
type User struct{ ID int64 }

// Group's key closes a brace it never opened.
//
//hotkey:cache key=group:ID}
type Group struct{ ID int64 }
