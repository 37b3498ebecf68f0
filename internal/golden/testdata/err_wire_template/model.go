// Package shop changes key templates and layouts, and takes a version
// back: each would leave the running build reading keys this one never
// writes, or values it cannot decode.
package shop

import "time"

// Product's key template changed.
//
//hotkey:cache key=item:{ID}
type Product struct {
	ID   int64
	Name string
}

// Order went back a version.
//
//hotkey:cache key=order:{ID} version=2
type Order struct {
	ID    int64
	Total int64
}

// Token became a collection.
//
//hotkey:cache key=token:{UserID} layout=hash field={Value} expires=ExpiresAt
type Token struct {
	UserID    int64
	Value     string
	ExpiresAt time.Time
}
