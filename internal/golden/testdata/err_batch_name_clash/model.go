package model

// User's batch loader option would be WithUsersLoader...
//
//hotkey:cache key=user:{ID}
type User struct{ ID int64 }

// ...which is the loader option of Users, whose name is its own plural.
//
//hotkey:cache key=users:{Group}
type Users struct {
	Group string
	IDs   []int64
}
