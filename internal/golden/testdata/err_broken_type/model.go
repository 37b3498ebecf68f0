package model

// User has a field whose type does not exist.
//
//hotkey:cache key=user:{ID}
type User struct {
	ID    int64
	Owner Missing
}
