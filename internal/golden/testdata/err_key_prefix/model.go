package model

// A key must start with a prefix of its own that ends in punctuation:
// otherwise a caller's value names any Redis key.

// ByName is all field.
//
//hotkey:cache key={Name}
type ByName struct{ Name string }

// Tail has its literal text after the field only.
//
//hotkey:cache key={Name}:tail
type Tail struct{ Name string }

// Glued runs its prefix into the field.
//
//hotkey:cache key=user{Name}
type Glued struct{ Name string }
