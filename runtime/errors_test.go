package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

// An error says "hotkey: " once, at its start, with the operation and its
// key once, and names the node by its address; wrapping keeps
// errors.Is working. Before, a collection read of a node found down said
// `hotkey: hgetall "login:1:ios": hotkey: hgetall "login:1:ios": hotkey:
// Redis unavailable` and named the node "redis".
func TestErrorsSayHotkeyOnceAndNameTheNode(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv)
	col := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue)
	owner := loginOwner{User: 1, Platform: "ios"}
	srv.Kill()

	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error with Redis down")
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "hotkey: ") || strings.Count(msg, "hotkey:") != 1 {
			t.Errorf("%q: want one \"hotkey:\", at the start", msg)
		}
		if !strings.Contains(msg, srv.Addr) {
			t.Errorf("%q: does not name the node, %s", msg, srv.Addr)
		}
	}
	// The call that finds Redis down fails with what the client said, or
	// ErrUnavailable when the breaker opened while it waited, and leaves
	// the breaker open.
	_, err := e.c.Get(e.ctx, "p:0")
	check(t, err)
	if e.c.Stats().RedisDownSince.IsZero() {
		t.Fatal("the breaker is closed after a call found Redis down")
	}
	_, err = col.c.HGetAll(col.ctx, loginOwner{User: 0, Platform: "ios"})
	check(t, err)
	if col.c.Stats().RedisDownSince.IsZero() {
		t.Fatal("the collection's breaker is closed after a call found Redis down")
	}

	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, err := e.c.Get(ctx, "p:1"); return err }},
		{"GetMany", func(ctx context.Context) error { _, err := e.c.GetMany(ctx, []string{"p:1", "p:2"}); return err }},
		{"Set", func(ctx context.Context) error { return e.c.Set(ctx, "p:1", sample(1, "v")) }},
		{"Del", func(ctx context.Context) error { return e.c.Del(ctx, "p:1") }},
		{"HGetAll", func(ctx context.Context) error { _, err := col.c.HGetAll(ctx, owner); return err }},
		{"HGetAllMany", func(ctx context.Context) error {
			_, err := col.c.HGetAllMany(ctx, []loginOwner{owner})
			return err
		}},
		{"HGet", func(ctx context.Context) error { _, err := col.c.HGet(ctx, owner, "t1"); return err }},
		{"HSet", func(ctx context.Context) error {
			return col.c.HSet(ctx, &login{User: 1, Platform: "ios", Token: "t1", ExpiresAt: time.Now().Add(time.Hour)})
		}},
		{"HDel", func(ctx context.Context) error { return col.c.HDel(ctx, owner, "t1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(context.Background())
			check(t, err)
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("%q: not an ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), "(last error: ") || !strings.Contains(err.Error(), "connection refused") {
				t.Errorf("%q: does not say what Redis last answered", err)
			}
		})
	}
}

// Errors as go-redis returns them: a dial refused, a read that timed out
// at its deadline, a reply of the server.
var (
	errDialRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	errReadTimeout = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
)

// serverReply is an error reply of Redis, as go-redis returns one.
type serverReply string

func (r serverReply) Error() string { return string(r) }
func (serverReply) RedisError()     {}

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
		t.Run(tc.name, func(t *testing.T) {
			c := new(Cache[string, profile])
			if got := c.countRedisError(tc.ctx, tc.err); got != tc.counts {
				t.Errorf("countRedisError = %v, want %v", got, tc.counts)
			}
			if want := map[bool]uint64{false: 0, true: 1}[tc.counts]; c.count.redisErrors.Load() != want {
				t.Errorf("RedisErrors = %d, want %d", c.count.redisErrors.Load(), want)
			}
		})
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
// have. A read that failed mid-way may have been executed.
func TestWhichErrorsSayTheCommandWasNotSent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		notSent bool
	}{
		{"a refused dial", fmt.Errorf("set: %w", errDialRefused), true},
		{"a pool that had no connection to give", redis.ErrPoolTimeout, true},
		{"a read that timed out", errReadTimeout, false},
		{"a connection closed mid-reply", io.ErrUnexpectedEOF, false},
		{"a reply of the server", redis.Nil, false},
	} {
		if got := notSent(tc.err); got != tc.notSent {
			t.Errorf("%s: notSent = %v, want %v", tc.name, got, tc.notSent)
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
		{"the breaker refusing", fmt.Errorf("hotkey: get: %w", ErrUnavailable), false},
		{"a wrong-type reply", serverReply("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{"a refused dial", errDialRefused, true},
		{"a read that timed out", errReadTimeout, true},
		{"a connection closed mid-reply", io.EOF, true},
		{"a pool that had no connection to give", redis.ErrPoolTimeout, true},
		{"a server loading its data", serverReply("LOADING Redis is loading the dataset in memory"), true},
		{"a replica without its master", serverReply("MASTERDOWN Link with MASTER is down"), true},
	} {
		if got := connectionFailure(tc.err); got != tc.down {
			t.Errorf("%s: connectionFailure = %v, want %v", tc.name, got, tc.down)
		}
	}
}

// The probe that decides whether a node is up dials as the client does:
// through the client's own Dialer when it has one (a proxy, a tunnel, a
// custom TLS), else go-redis's. A probe that dialled otherwise would judge
// a path the client never takes.
func TestTheProbeDialsAsTheClientDoes(t *testing.T) {
	srv := redistest.Start(t)
	ping := func(t *testing.T, o *redis.Options) {
		t.Helper()
		probe := redis.NewClient(probeOptions(o))
		defer probe.Close()
		if err := probe.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("probe's ping: %v", err)
		}
	}
	t.Run("through the client's Dialer", func(t *testing.T) {
		// The address resolves nowhere; only the Dialer reaches the server.
		const addr = "through-the-dialer.invalid:6379"
		var dials atomic.Int32
		var asked atomic.Value
		ping(t, &redis.Options{Addr: addr, Dialer: func(ctx context.Context, network, a string) (net.Conn, error) {
			dials.Add(1)
			asked.Store(a)
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Addr)
		}})
		if dials.Load() == 0 || asked.Load() != addr {
			t.Errorf("the Dialer dialled %d times, for %v; want the probe's dials, for %s", dials.Load(), asked.Load(), addr)
		}
	})
	t.Run("with go-redis's dialer when the client has none", func(t *testing.T) {
		ping(t, &redis.Options{Addr: srv.Addr})
	})
}
