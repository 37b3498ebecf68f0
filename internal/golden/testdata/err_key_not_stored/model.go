package model

// A key field must survive the round trip through Redis.

// User leaves its key field out of the stored value.
//
//hotkey:cache key=user:{ID}
type User struct {
	ID   int64 `msgpack:"-"`
	Name string
}

// Session keys by an unexported field, which msgpack never stores.
//
//hotkey:cache key=session:{token}
type Session struct {
	token  string
	UserID int64
}
