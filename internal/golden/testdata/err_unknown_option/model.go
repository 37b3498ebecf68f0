package model

// User misspells an option.
//
//hotkey:cache key=user:{ID} ttl=30m hot_qsp=3000
type User struct{ ID int64 }
