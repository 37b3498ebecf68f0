package model

// UserRecord takes the name of the Account type.
//
//hotkey:cache key=user:{ID} name=Account
type UserRecord struct{ ID int64 }

// Account is cached under its own name.
//
//hotkey:cache key=account:{ID}
type Account struct{ ID int64 }
