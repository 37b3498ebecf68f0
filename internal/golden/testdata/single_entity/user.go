// Package model has one cached entity, the example of the README.
package model

//go:generate hotkeygen

// User is an account holder.
//
//hotkey:cache key=user:{ID} ttl=30m hot_qps=3000 top_n=10
type User struct {
	ID   int64
	Name string
	Tags []string
}
