package model

// IDs is not a struct.
//
//hotkey:cache key=ids:{ID}
type IDs []int64

// Name is not a struct either.
//
//hotkey:cache key=name:{ID}
type Name string
