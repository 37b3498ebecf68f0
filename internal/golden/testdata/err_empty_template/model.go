package model

// User's key is empty.
//
//hotkey:cache key=""
type User struct{ ID int64 }

// Group's key names no field, so every group would share it.
//
//hotkey:cache key=groups
type Group struct{ ID int64 }
