package model

// User writes values the options cannot read.
//
//hotkey:cache key=user:{ID} ttl=30minutes hot_qps=lots top_n=ten
type User struct{ ID int64 }
