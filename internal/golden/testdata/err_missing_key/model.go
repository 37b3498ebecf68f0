package model

// User has options but no key.
//
//hotkey:cache ttl=30m
type User struct{ ID int64 }
