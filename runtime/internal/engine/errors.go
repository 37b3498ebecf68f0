package engine

import (
	"context"
	"errors"

	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
)

// The sentinel errors, the runtime's (runtime/errors.go says what each
// means). They carry no prefix: they are returned wrapped, as the cause
// of an operation's error (opError), which names the package once.
var (
	ErrNotFound    = errors.New("not found")
	ErrDecode      = errors.New("value does not decode")
	ErrClosed      = errors.New("cache closed")
	ErrUnavailable = errors.New("Redis unavailable")
)

// opError is the error of an operation: it says "hotkey: " and what
// failed once (runtime/internal/operr). collection.go makes its errors
// through opErr and fieldErr too.
type opError = operr.Error

func opErr(op, key string, err error) error           { return operr.Of(op, key, err) }
func fieldErr(op, key, field string, err error) error { return operr.OfField(op, key, field, err) }
func causeOf(err error) error                         { return operr.Cause(err) }

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
