package model

// User allows more hot keys than local slots.
//
//hotkey:cache key=user:{ID} top_n=50 local_size=20
type User struct{ ID int64 }
