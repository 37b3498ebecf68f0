package model

// Order would get an OrderKey struct, which the package declares already.
//
//hotkey:cache key=order:{Tenant}:{Num}
type Order struct {
	Tenant string
	Num    uint32
}

// OrderKey is the package's own.
type OrderKey struct{ Tenant string }
