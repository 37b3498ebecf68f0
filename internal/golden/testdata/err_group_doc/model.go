package model

// These types share a doc comment; a directive there would apply to both.
//
//hotkey:cache key=user:{ID}
type (
	User  struct{ ID int64 }
	Group struct{ ID int64 }
)
