package runtime

import "github.com/hotkeygen/hotkeygen/runtime/internal/engine"

// The sentinel errors carry no prefix: the runtime returns them wrapped,
// as the cause of an operation's error, which names the package once:
// `hotkey: get "user:1": not found`. Match them with errors.Is.
var (
	// ErrNotFound reports a key that is absent from Redis.
	ErrNotFound = engine.ErrNotFound
	// ErrDecode reports bytes in Redis that do not decode as the entity.
	// The value is not cached; fix or delete the key in Redis.
	ErrDecode = engine.ErrDecode
	// ErrClosed reports a call on a Cache after Close.
	ErrClosed = engine.ErrClosed
	// ErrUnavailable reports a call refused without asking Redis, because
	// a recent call found Redis unreachable: reads of hot keys go on from
	// memory, and a background probe lets calls through again as soon as
	// Redis answers. The error names the node by its address.
	ErrUnavailable = engine.ErrUnavailable
	// ErrValueTooLarge reports a write whose encoded value is larger than
	// max_value_bytes_hard (WithMaxValueBytesHard).
	ErrValueTooLarge = engine.ErrValueTooLarge
)
