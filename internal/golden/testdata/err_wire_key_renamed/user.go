// Package accounts renames msgpack keys that the build generated from
// the recorded shape still reads.
package accounts

// Address is nested.
type Address struct {
	City string `msgpack:"town"` // was City
}

// User is cached.
//
//hotkey:cache key=user:{ID}
type User struct {
	ID    int64
	Email string `msgpack:"mail"` // was Email
	Home  Address
}
