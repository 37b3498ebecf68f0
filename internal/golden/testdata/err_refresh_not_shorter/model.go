package model

// User refreshes no sooner than its local copies expire.
//
//hotkey:cache key=user:{ID} local_ttl=30s refresh=30s
type User struct{ ID int64 }
