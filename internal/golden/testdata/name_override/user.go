// Package legacy names its repositories apart from its types.
package legacy

// UserRecord is a row of the old users table, presented as an Account.
//
//hotkey:cache key=account:{ID} name=Account
type UserRecord struct {
	ID    int64
	Email string
}

// profileRow gets exported names from a lower-case name=.
//
//hotkey:cache key=profile:{ID} name=profile
type profileRow struct {
	ID  int64
	Bio string
}

// OrderRow is keyed by two fields; name= names its key struct too.
//
//hotkey:cache key=purchase:{Shop}:{Num} name=Purchase
type OrderRow struct {
	Shop  string
	Num   int64
	Total int64
}
