package group

import (
	"context"
	"errors"
)

// ErrAbandoned is Unattended's error when the context ended first.
var ErrAbandoned = errors.New("the call was abandoned when its context ended")

// Unattended calls f, the user's code (a loader, the sync hook) given
// ctx, from a goroutine Close waits for, on a goroutine of its own, and
// returns what f returns, or ErrAbandoned as soon as ctx ends: Close
// cancels the contexts it gave such code and does not wait for code that
// ignores them. f then goes on alone, and what it returns is dropped.
func Unattended[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ErrAbandoned
	}
}
