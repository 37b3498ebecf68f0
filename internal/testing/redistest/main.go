package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// Main runs a package's tests that talk to Redis: go-redis's own log is
// silenced, since tests that stop Redis would fill the output with dial
// errors, and the run fails on a goroutine left behind. After a failed
// dial, go-redis's pool retries in a goroutine of its own that sleeps a
// second and ends by itself, closed client or not: it is not ours to stop.
// m is the package's *testing.M, or what wraps it (RunWithServer's, for
// godoc examples).
func Main(m goleak.TestingM) {
	redis.SetLogger(discardLog{})
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

type discardLog struct{}

func (discardLog) Printf(context.Context, string, ...any) {}

// WaitFor polls cond until it holds, and fails t after 10 s: sessions,
// breakers and probes move on goroutines of their own, in their own time.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10s waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
