package reads

// Expiries holds the expiry of a copy of each key of a batch read (see
// layout.ExpiresAt), layout.Unasked for a key whose copy its caller was
// not to keep; nil when the entity learns no TTL, for which every copy's
// is 0.
type Expiries []int64

// Of returns the expiry of a copy of the i-th key.
func (x Expiries) Of(i int) int64 {
	if x == nil {
		return 0
	}
	return x[i]
}
