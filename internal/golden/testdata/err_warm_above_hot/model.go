package model

// User demotes above the promotion rate.
//
//hotkey:cache key=user:{ID} hot_qps=100 warm_qps=500
type User struct{ ID int64 }
