// Package store caches several entities; they share one generated file,
// sorted by type name.
package store

import "time"

// User is an account holder.
//
//hotkey:cache key=user:{ID} ttl=30m
type User struct {
	ID      int64
	Name    string
	Address *Address
}

// Address is shared by users and shops; one clone function serves both.
type Address struct {
	Street string
	Lines  []string
}

// session is unexported: its repository is still generated. Its fields
// are exported, as msgpack stores only those.
//
//hotkey:cache key=session:{Token} ttl=15m
type session struct {
	Token   string
	UserID  int64
	Expires time.Time
}
