package runtime

import (
	"context"
	"errors"
	"strconv"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// The sentinel errors carry no prefix: the runtime returns them wrapped,
// as the cause of an operation's error (opError), which names the package
// once: `hotkey: get "user:1": not found`. Match them with errors.Is.
var (
	// ErrNotFound reports a key that is absent from Redis.
	ErrNotFound = errors.New("not found")
	// ErrDecode reports bytes in Redis that do not decode as the entity.
	// The value is not cached; fix or delete the key in Redis.
	ErrDecode = errors.New("value does not decode")
	// ErrClosed reports a call on a Cache after Close.
	ErrClosed = errors.New("cache closed")
)

// ErrUnavailable reports a call refused without asking Redis, because a
// recent call found Redis unreachable: reads of hot keys go on from
// memory, and a background probe lets calls through again as soon as
// Redis answers. The error names the node by its address.
var ErrUnavailable = errors.New("Redis unavailable")

// opError is the error of an operation (op) on a key, and on one of its
// fields for a collection's item; key is empty for an operation on
// several. It is the one error a caller gets that says "hotkey: " and
// what failed: `hotkey: hget "devtok:42" "phone": Redis unavailable at
// 10.0.0.7:6379 (…)`. The errors it wraps name neither.
type opError struct {
	op, key, field string
	err            error
}

func (e *opError) Error() string {
	s := "hotkey: " + e.op
	if e.key != "" {
		s += " " + strconv.Quote(e.key)
	}
	if e.field != "" {
		s += " " + strconv.Quote(e.field)
	}
	return s + ": " + e.err.Error()
}

func (e *opError) Unwrap() error { return e.err }

// opErr returns err, the cause of op on key failing, as that operation's
// error, unless a layer below already made it one: an operation's
// prefix, and its key, appear once in an error, however many layers it
// went through.
func opErr(op, key string, err error) error {
	if _, ok := err.(*opError); ok {
		return err
	}
	return &opError{op: op, key: key, err: err}
}

// fieldErr is opErr for an operation on field of key.
func fieldErr(op, key, field string, err error) error {
	if _, ok := err.(*opError); ok {
		return err
	}
	return &opError{op: op, key: key, field: field, err: err}
}

// causeOf returns what err, an operation's error, says of why it failed,
// without its prefix: for an error that quotes another.
func causeOf(err error) error {
	if oe, ok := err.(*opError); ok {
		return oe.err
	}
	return err
}

// What a read found, absent or failed: the one classifier every read
// path asks. A key missing from Redis (noKey) sends a read to the loader;
// the null placeholder (layout.Null) says the row is known absent; bytes
// that do not decode are ErrDecode; anything else is Redis failing, unless
// the caller gave up.

// noKey reports a key absent from Redis, as opposed to one holding
// layout.Null: only a missing key sends a read to the loader. It prints and
// matches as ErrNotFound.
type noKey struct{}

func (noKey) Error() string        { return ErrNotFound.Error() }
func (noKey) Is(target error) bool { return target == ErrNotFound }

func isNoKey(err error) bool { return errors.As(err, new(noKey)) }

// needsLoad reports a read the loader should answer: the key is missing
// from Redis, or holds bytes that are not a value of the entity.
func needsLoad(err error) bool { return isNoKey(err) || errors.Is(err, ErrDecode) }

// cachedAbsence reports an error that says the row is known to be absent:
// Redis holds the null placeholder, as opposed to holding nothing.
func cachedAbsence(err error) bool { return errors.Is(err, ErrNotFound) && !isNoKey(err) }

// redisFailed reports an error of Redis itself, as opposed to an absent
// key, bytes that do not decode, or the caller giving up.
func redisFailed(err error) bool {
	return err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrDecode) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrClosed)
}

// countRedisError counts err, the failure of a command sent under ctx, as a
// Redis error (Stats.RedisErrors), unless it says only that ctx ended
// (breaker.RedisError). It reports whether err counted, for the callers
// that log what did.
func (c *Cache[K, V]) countRedisError(ctx context.Context, err error) bool {
	if !breaker.RedisError(ctx, err) {
		return false
	}
	c.count.redisErrors.Add(1)
	return true
}
