package archive

// Order is an archived order: its template meets shop.Order's, and its
// change buffer and Bloom filter would be shop.Order's, both named after
// the entity "order".
//
//hotkey:cache key=order:{Num} changes=on bloom=on
type Order struct{ Num int64 }

// Cart has keys of its own, but its cluster-wide counts would be
// shop.Cart's.
//
//hotkey:cache key=archived_cart:{ID} aggregate=on
type Cart struct{ ID int64 }

// Receipt shares its entity's name with shop.Receipt, but only it has a
// change buffer: nothing is shared.
//
//hotkey:cache key=receipt:{ID} changes=on
type Receipt struct{ ID int64 }
