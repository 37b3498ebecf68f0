// Package v1 is the first build of a service's cached Product, which the
// deploy tests run beside its changed successors (internal/testing/deploytest).
package v1

//go:generate go run github.com/hotkeygen/hotkeygen/cmd/hotkeygen

// Product as the running build has it.
//
//hotkey:cache key=product:{ID} ttl=10m
type Product struct {
	ID    int64
	Name  string
	Color string
	Stock int64
}
