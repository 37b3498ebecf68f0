package model

// Load is a function.
//
//hotkey:cache key=user:{ID}
func Load() {}

// Default is a variable.
//
//hotkey:cache key=user:{ID}
var Default = User{}

// User has a directive on a field and one that floats above it.
type User struct {
	//hotkey:cache key=user:{ID}
	ID int64
}

//hotkey:cache key=user:{ID}

// Local declares a type inside a function.
func Local() {
	//hotkey:cache key=user:{ID}
	type local struct{ ID int64 }
	_ = local{}
}

// Vars declares a variable inside a function.
func Vars() {
	//hotkey:cache key=user:{ID}
	var v int
	_ = v
}
