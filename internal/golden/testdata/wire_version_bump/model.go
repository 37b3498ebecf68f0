// Package shop makes the changes err_wire_kind_changed and
// err_wire_template refuse, with a version bump: each entity's keys move
// out of the running build's way.
package shop

import "time"

// Product changed kinds and its key template.
//
//hotkey:cache key=item:{ID} version=2 changes=on bloom=on
type Product struct {
	ID    int64
	Name  string
	Tags  []string
	Stock string
}

// Token became a collection.
//
//hotkey:cache key=token:{UserID} layout=hash field={Value} expires=ExpiresAt version=7
type Token struct {
	UserID    int64
	Value     string
	ExpiresAt time.Time
}
