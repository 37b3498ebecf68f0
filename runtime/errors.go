package runtime

import "errors"

var (
	// ErrNotFound reports a key that is absent from Redis.
	ErrNotFound = errors.New("hotkey: not found")
	// ErrDecode reports bytes in Redis that do not decode as the entity.
	// The value is not cached; fix or delete the key in Redis.
	ErrDecode = errors.New("hotkey: value does not decode")
	// ErrClosed reports a call on a Cache after Close.
	ErrClosed = errors.New("hotkey: cache closed")
)

// ErrUnavailable reports a call refused without asking Redis, because a
// recent call found Redis unreachable: reads of hot keys go on from
// memory, and a background probe lets calls through again as soon as
// Redis answers.
var ErrUnavailable = errors.New("hotkey: Redis unavailable")
