package breaker

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors as go-redis returns them: a dial refused, a read that timed out
// at its deadline, a reply of the server.
var (
	errDialRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	errReadTimeout = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	errDialTimeout = &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
)

// serverReply is an error reply of Redis, as go-redis returns one.
type serverReply string

func (r serverReply) Error() string { return string(r) }
func (serverReply) RedisError()     {}

// refused is the cause of a call an open breaker refused.
var refused = New(context.Background(), "10.0.0.7:6379", nil, &Config{Unavailable: errUnavailable}).Unavailable()

// deadlinePassed is a context whose deadline has passed while its own
// timer has not yet ended it: Err is still nil.
type deadlinePassed struct{ context.Context }

func (deadlinePassed) Deadline() (time.Time, bool) { return time.Now().Add(-time.Second), true }

// A caller giving up is not counted as a Redis error, but only an error
// that says the caller gave up, under a context that did end: Redis
// refusing a caller who has gone still counts, and so does a dial timing
// out under a live context, which go-redis reports as
// context.DeadlineExceeded too. RedisErrors feeds alerts; either mistake
// hides an outage or invents one.
func TestACallerGivingUpIsNotCountedAsARedisError(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	future, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		counts bool
	}{
		{"a cancelled call's context.Canceled", cancelled, fmt.Errorf("get: %w", context.Canceled), false},
		{"an expired call's context.DeadlineExceeded", expired, context.DeadlineExceeded, false},
		{"an expired call's read timing out at its deadline", expired, errReadTimeout, false},
		{"a read timing out at the deadline a moment before the context ends", deadlinePassed{context.Background()}, errReadTimeout, false},
		{"a cancelled call's refused dial", cancelled, errDialRefused, true},
		{"a dial timing out under a live context", context.Background(), context.DeadlineExceeded, true},
		{"a read timing out under a live context", context.Background(), errReadTimeout, true},
		{"a read timing out before the caller's deadline", future, errReadTimeout, true},
		{"a context.Canceled not the caller's, whose context is live", context.Background(), context.Canceled, true},
	} {
		if got := RedisError(tc.ctx, tc.err); got != tc.counts {
			t.Errorf("%s: RedisError = %v, want %v", tc.name, got, tc.counts)
		}
	}
}

// A context has ended when it says so or when its deadline has passed,
// and not before: a read whose deadline was the context's times out a
// moment before the context's own timer ends it, and that timeout is the
// caller's, not Redis's.
func TestAContextEndsAtItsDeadline(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	future, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		ended bool
	}{
		{"a live context with no deadline", context.Background(), false},
		{"a live context whose deadline is to come", future, false},
		{"a cancelled context", cancelled, true},
		{"a context whose deadline passed before its timer fired", deadlinePassed{context.Background()}, true},
	} {
		if got := contextEnded(tc.ctx); got != tc.ended {
			t.Errorf("%s: contextEnded = %v, want %v", tc.name, got, tc.ended)
		}
	}
}

// Only an error raised before a command could leave is "not sent": a
// write that failed so did not land, and is not retried as one that may
// have. A read that failed mid-way may have been executed. Of those, a
// dial refused says nothing listens; one that timed out, only that the
// network was slow or silent.
func TestWhichErrorsSayTheCommandWasNotSent(t *testing.T) {
	for _, tc := range []struct {
		name             string
		err              error
		notSent, refused bool
	}{
		{"a refused dial", fmt.Errorf("set: %w", errDialRefused), true, true},
		{"a dial that timed out: a slow network, perhaps", errDialTimeout, true, false},
		{"a pool that had no connection to give", redis.ErrPoolTimeout, true, false},
		{"a read that timed out", errReadTimeout, false, false},
		{"a connection closed mid-reply", io.ErrUnexpectedEOF, false, false},
		{"a reply of the server", redis.Nil, false, false},
	} {
		if got := NotSent(tc.err); got != tc.notSent {
			t.Errorf("%s: notSent = %v, want %v", tc.name, got, tc.notSent)
		}
		if got := Refused(tc.err); got != tc.refused {
			t.Errorf("%s: refused = %v, want %v", tc.name, got, tc.refused)
		}
	}
}

// An error opens the breaker only if it says the node cannot be reached or
// cannot serve. A missing key, a client the caller closed, a caller giving
// up or the breaker's own refusal say nothing of the node; counting them
// would open the breaker on a healthy Redis.
func TestWhichErrorsSayTheNodeIsDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		down bool
	}{
		{"no error", nil, false},
		{"a missing key", redis.Nil, false},
		{"a client the caller closed", fmt.Errorf("get: %w", redis.ErrClosed), false},
		{"a caller that cancelled", context.Canceled, false},
		{"a caller whose deadline passed", fmt.Errorf("get: %w", context.DeadlineExceeded), false},
		{"the breaker refusing", fmt.Errorf("hotkey: get: %w", refused), false},
		{"a wrong-type reply", serverReply("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{"a refused dial", errDialRefused, true},
		{"a read that timed out", errReadTimeout, true},
		{"a connection closed mid-reply", io.EOF, true},
		{"a pool that had no connection to give", redis.ErrPoolTimeout, true},
		{"a server loading its data", serverReply("LOADING Redis is loading the dataset in memory"), true},
		{"a replica without its master", serverReply("MASTERDOWN Link with MASTER is down"), true},
	} {
		if got := ConnectionFailure(tc.err); got != tc.down {
			t.Errorf("%s: connectionFailure = %v, want %v", tc.name, got, tc.down)
		}
	}
}
