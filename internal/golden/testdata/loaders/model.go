// Package store reads through to a database on Redis misses, with the
// loader options generated for every entity: one key at a time, and many.
package store

// User is keyed by one field: its loaders take the ID as it is.
//
//hotkey:cache key=loaders:user:{ID} ttl=10m null_ttl=1m
type User struct {
	ID   int64
	Name string
}

// Order is keyed by two fields: its loader takes them as GetOrder does,
// its batch loader the key structs the cache holds.
//
//hotkey:cache key=loaders:order:{Tenant}:{Num}
type Order struct {
	Tenant string
	Num    uint32
	Total  int64
}
