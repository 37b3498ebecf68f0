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

// session is unexported: its repository is still generated.
//
//hotkey:cache key=session:{token} ttl=15m
type session struct {
	token   string
	userID  int64
	expires time.Time
}
