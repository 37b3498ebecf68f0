package model

// The findings of a failing run as GitHub Actions workflow commands
// (flags: -format=github): an error whose message holds '%', escaped, and
// a warning.

// User's jitter has one percent sign too many.
//
//hotkey:cache key=user:{ID} jitter=5%%
type User struct{ ID int64 }

// Cart is capitalised, so it is ignored.
//
// HotKey:cache key=cart:{ID}
type Cart struct{ ID int64 }
