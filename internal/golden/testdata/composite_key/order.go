// Package orders keys its entity by two fields of different kinds.
package orders

// Order is one order of a tenant.
//
//hotkey:cache key=order:{Tenant}:{Num} ttl=1h
type Order struct {
	Tenant string
	Num    uint32
	Items  []Item
	Total  int64 // in cents
}

// Item is one line of an Order; a plain copy of it is a deep one.
type Item struct {
	SKU string
	Qty int
}
