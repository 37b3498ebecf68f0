package model

// The errors of several structs and files are reported together, sorted.
//
//hotkey:cache key=user:{Nmae}
type User struct{ Name string }

// Fine is fine, but nothing is generated while others fail.
//
//hotkey:cache key=fine:{ID}
type Fine struct{ ID int64 }
