package breaker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file says what an error says of a node: every package of the
// runtime asks it, so that one command's failure means the same to the
// breaker, to Stats and to the write that may or may not have landed.

// NoAnswer is the verdict on a node that left a PING, or a command,
// unanswered for Waited.
type NoAnswer struct{ Waited time.Duration }

func (e NoAnswer) Error() string {
	return fmt.Sprintf("no answer for %v", e.Waited.Round(time.Millisecond))
}

// refusal is the cause of the error of a call an open breaker stopped
// (Unavailable): it says nothing new of the node, and no breaker opens on
// it (ConnectionFailure).
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// NotSent reports an error raised before the command could reach Redis:
// no connection could be had. A write that failed so did not land.
func NotSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, redis.ErrPoolTimeout)
}

// Refused reports an error that says nothing listens at the node's
// address: a connection that could not be made, other than for want of
// time (a dial that timed out may have met a slow network, not a dead
// server).
func Refused(err error) bool {
	var ne net.Error
	return NotSent(err) && !(errors.As(err, &ne) && ne.Timeout()) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, redis.ErrPoolTimeout)
}

// RedisError reports whether err, the failure of a command sent under
// ctx, counts as a Redis error (Stats.RedisErrors): it does unless ctx
// had ended and err says so, the context's error, or the timeout of a
// read whose deadline was the context's (go-redis's
// ContextTimeoutEnabled). Whoever stopped waiting, a caller's deadline or
// cancellation, or Close, says nothing of Redis. A dial that timed out
// under a ctx still live returns context.DeadlineExceeded too, and
// counts.
func RedisError(ctx context.Context, err error) bool {
	if contextEnded(ctx) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)) {
		return false
	}
	return true
}

// contextEnded reports whether ctx has ended or its deadline has passed:
// a read whose deadline was ctx's times out when the deadline passes, a
// moment before ctx's own timer ends it. Deadlines are the wall clock's.
func contextEnded(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// ConnectionFailure reports an error that says the node cannot be
// reached or cannot serve: the network, a closed pool, a timeout, or a
// server reply that means the same (loading, busy, no master). Replies
// about the command itself, a missing key, a client the caller closed,
// the caller giving up and a breaker's own refusal are not.
func ConnectionFailure(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrClosed) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(refusal)) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range []string{"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true
}
