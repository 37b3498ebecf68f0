package model

import "time"

// Token is one login token of a user on one platform: the user's tokens
// of a platform are one collection, a Redis hash keyed by token.
//
//hotkey:cache key=token:{UserID}:{Platform} layout=hash field={Token} ttl=2160h expires=ExpiresAt
type Token struct {
	UserID    int64
	Platform  string
	Token     string
	Status    int
	ExpiresAt time.Time
}

// Line is a line of a cart, keyed by its SKU number; lines expire with the
// cart, ttl after the last write that needed it.
//
//hotkey:cache key=cart:{CartID} layout=hash field={SKU} ttl=24h
type Line struct {
	CartID string
	SKU    uint32
	Qty    int
}

// Session is a device's session; its expiry is stored under a msgpack tag
// of its own, where the write script looks for it.
//
//hotkey:cache key=session:{UserID} layout=hash field={Device} expires=Until
type Session struct {
	UserID int64
	Device string
	Until  time.Time `msgpack:"until"`
}
