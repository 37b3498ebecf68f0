package model

// Other has its own problem.
//
//hotkey:cache key=other:{ID} top_n=0
type Other struct{ ID int64 }
