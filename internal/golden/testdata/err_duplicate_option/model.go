package model

// User sets ttl twice, on two lines.
//
//hotkey:cache key=user:{ID} ttl=30m
//hotkey:cache ttl=1h
type User struct{ ID int64 }
