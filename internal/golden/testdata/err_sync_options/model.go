package model

// Feed breaks the change buffer's time relations and sizes a Bloom filter
// it does not turn on.
//
//hotkey:cache key=feed:{ID} changes=on sync_every=1m sync_lease=30s
//hotkey:cache bloom_fp=0.01
type Feed struct {
	ID int64
}

// Event writes the buffer's interval without turning the buffer on, and
// keeps the buffer's keys for fewer than ten intervals.
//
//hotkey:cache key=event:{ID} sync_every=10s sync_ttl=90s
type Event struct {
	ID int64
}

// Tag asks for a Bloom filter whose rate is no fraction.
//
//hotkey:cache key=tag:{ID} bloom=on bloom_fp=1.5
type Tag struct {
	ID int64
}
