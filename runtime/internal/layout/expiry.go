package layout

import "time"

// Replies of PTTL that are not a time left.
const (
	pttlNoExpiry = time.Duration(-1) // the key has no TTL
	pttlNoKey    = time.Duration(-2) // there is no key
)

// Unasked is the expiry of a copy of a key whose TTL its read did not
// ask for (see Layout.Read): unknown, so the copy may not be kept.
const Unasked int64 = -1

// ExpiresAt is the local expiry of a copy of a key, as the Clock's
// UnixNano, that Redis, asked by a command sent at sent (the Clock's
// time), said expires in left, a PTTL reply; 0 for a key without a TTL.
// It is never later than Redis's own expiry: Redis counted left from
// when it ran the command, in whole milliseconds, at or after sent's
// millisecond, and it still holds a key during the millisecond it
// expires at.
func ExpiresAt(sent time.Time, left time.Duration) int64 {
	switch left {
	case pttlNoExpiry:
		return 0
	case pttlNoKey: // gone by the PTTL: expired when the read was sent
		left = 0
	}
	return max(1, sent.UnixMilli()*int64(time.Millisecond)+int64(left))
}

// WroteExpiry is the local expiry of a copy of what a write sent at sent
// stored with ttl (0: no expiry), as ExpiresAt.
func WroteExpiry(sent time.Time, ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return ExpiresAt(sent, ttl)
}
