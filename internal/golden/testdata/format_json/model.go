package model

// The findings of a failing run in the json format (flags: -format=json):
// errors of the directives and of the structs, and a warning, each with
// the rule it breaks.

// User misspells an option and names a field it lacks.
//
//hotkey:cache key=user:{Nmae} hot_qsp=3000
type User struct{ Name string }

// Job stores a field msgpack cannot encode.
//
//hotkey:cache key=job:{ID}
type Job struct {
	ID   int64
	Done func()
}

// Cart's options contradict each other.
//
//hotkey:cache key=cart:{ID} hot_qps=10 warm_qps=20
type Cart struct{ ID int64 }

// Order's directive is misspelt, so it is ignored.
//
//hotkeys:cache key=order:{ID}
type Order struct{ ID int64 }
