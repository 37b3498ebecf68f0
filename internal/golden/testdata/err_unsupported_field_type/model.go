package model

// Reading's key fields have types a key cannot hold.
//
//hotkey:cache key=reading:{Score}:{Raw}:{At}
type Reading struct {
	Score float64
	Raw   []byte
	At    struct{ X int }
}
