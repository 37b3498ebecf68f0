package model

// User misspells a degrade mode: the error names the modes and suggests
// the closest one.
//
//hotkey:cache key=user:{ID} degrade=laoder
type User struct{ ID int64 }
