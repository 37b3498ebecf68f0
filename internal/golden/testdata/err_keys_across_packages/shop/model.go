// Package shop and package archive are generated in one run
// (hotkeygen ./...): they share one Redis, so their keys are checked
// together.
package shop

// Order is a live order.
//
//hotkey:cache key=order:{ID} changes=on bloom=on
type Order struct{ ID int64 }

// Cart is a live cart, counted cluster-wide.
//
//hotkey:cache key=cart:{ID} aggregate=on
type Cart struct{ ID int64 }

// Receipt is a live receipt, without a change buffer.
//
//hotkey:cache key=shop_receipt:{ID}
type Receipt struct{ ID int64 }
