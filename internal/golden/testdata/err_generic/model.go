package model

// Box holds any value.
//
//hotkey:cache key=box:{ID}
type Box[T any] struct {
	ID    int64
	Value T
}

// UserAlias is an alias of User.
//
//hotkey:cache key=user:{ID}
type UserAlias = User

// User is a plain struct.
type User struct{ ID int64 }
