package model

// User would get the options WithUserLoader and WithUsersLoader; the
// package declares both already.
//
//hotkey:cache key=user:{ID}
type User struct{ ID int64 }

// WithUserLoader is the package's own.
func WithUserLoader() {}

// WithUsersLoader is the package's own too.
var WithUsersLoader = 1
