// Package v2 is the next build of Product: Color gave way to Tags, and
// Stock became a string, which v1 cannot decode; version=2 moves its
// values to keys of their own.
package v2

//go:generate go run github.com/hotkeygen/hotkeygen/cmd/hotkeygen

// Product as the new build has it.
//
//hotkey:cache key=product:{ID} ttl=10m version=2
type Product struct {
	ID    int64
	Name  string
	Tags  []string
	Stock string
}
