// Package accounts keys its entity by named types, one of them from
// another package.
package accounts

import "github.com/hotkeygen/hotkeygen/internal/golden/testdata/named_key_types/ids"

// UserID identifies a user.
type UserID int64

// Region is where an account lives.
type Region string

// Account is a user's account in a region.
//
//hotkey:cache key=acct:{Region}:{Shard}:{ID}
type Account struct {
	ID      UserID
	Region  Region
	Shard   ids.Shard
	Balance int64
}
