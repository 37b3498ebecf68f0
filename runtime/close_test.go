package runtime

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// tryDial is go-redis's pool redialling after a failed dial: it sleeps a
// second and ends by itself, closed client or not (see TestMain).
const tryDial = "github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Close may run while calls are finding Redis down: every goroutine they
// start (the breaker's verdict and probe, a session's check) starts before
// Close waits for the Cache's goroutines or not at all, so none outlives
// Close (goleak) and no wg.Add races its wg.Wait (-race).
func TestCloseWhileCallsFindRedisDown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction(tryDial))
	addr := deadAddr(t)
	for round := range 10 {
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
		c, err := New(rdb, profileGlue, WithLogger(quiet), WithInvalidate(InvalidateTracking))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var callers sync.WaitGroup
		for i := range 4 {
			key := "p:" + strconv.Itoa(round*4+i)
			callers.Go(func() {
				for {
					_, err := c.Get(ctx, key)
					if errors.Is(err, ErrClosed) {
						return
					}
					if err := c.Set(ctx, key, sample(1, "v")); errors.Is(err, ErrClosed) {
						return
					}
				}
			})
		}
		waitFor(t, "the breaker to open", func() bool { return !c.Stats().RedisDownSince.IsZero() })
		c.Close()
		callers.Wait()
		rdb.Close()
	}
}

// A call whose command failed asks for the breaker's verdict, and waits
// for it no longer than its own context: the ping is held until the call
// has returned, so a call that waited for it past its context's end
// would never return (the watchdog, patience, says so).
func TestCallsDoNotWaitForTheVerdictPastTheirContext(t *testing.T) {
	for _, op := range []string{"Get", "Set", "Del"} {
		t.Run(op, func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: deadAddr(t), MaxRetries: -1, DialerRetries: 1})
			t.Cleanup(func() { rdb.Close() })
			gate := newLineGate(gateHold) // the verdict waits until the call has returned
			c, err := New(rdb, profileGlue, WithLogger(quiet), WithInvalidate(InvalidateOff), gate.option())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { gate.set(gatePass); c.Close() })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				var err error
				switch op {
				case "Get":
					_, err = c.Get(ctx, "p:1")
				case "Set":
					err = c.Set(ctx, "p:1", sample(1, "v"))
				case "Del":
					err = c.Del(ctx, "p:1")
				}
				done <- err
			}()
			<-gate.holding
			cancel()
			select {
			case err := <-done:
				if err == nil || errors.Is(err, ErrUnavailable) {
					t.Fatalf("%s = %v, want the command's own error", op, err)
				}
			case <-time.After(patience):
				t.Fatalf("%s still waits for the breaker's verdict %v after its context ended", op, patience)
			}
		})
	}
}

// Close does not wait for a loader that ignores its context: it cancels
// the context and returns, the reads waiting for the loader fail with
// ErrClosed, and the loader's result, whenever it comes, is dropped. The
// loaders here block until the test ends.
func TestCloseDoesNotWaitForALoaderThatIgnoresItsContext(t *testing.T) {
	srv := redistest.Start(t)
	for _, path := range []string{"read", "sync"} {
		t.Run(path, func(t *testing.T) {
			entered, stuck := make(chan struct{}, 1), make(chan struct{})
			t.Cleanup(func() { close(stuck) })
			load := func(context.Context, string) (*profile, error) {
				entered <- struct{}{}
				<-stuck // the context's end is ignored
				return sample(1, "late"), nil
			}
			opts := []Option{WithLogger(quiet), WithInvalidate(InvalidateOff), WithLoader(load)}
			if path == "sync" {
				opts = append(opts, WithEntity("closing"), WithChanges(true), WithSyncEvery(time.Millisecond))
			}
			c, err := New(srv.Client(t), profileGlue, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			read := make(chan error, 1)
			switch path {
			case "read":
				go func() { _, err := c.Get(ctx, "p:1"); read <- err }()
			case "sync":
				if err := c.MarkChanged(ctx, "p:1"); err != nil {
					t.Fatal(err)
				}
				read <- ErrClosed
			}
			<-entered
			closed := make(chan struct{})
			go func() { c.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(patience):
				t.Fatalf("Close still waits for a loader that ignores its context after %v", patience)
			}
			if err := <-read; !errors.Is(err, ErrClosed) {
				t.Fatalf("the read waiting for the loader = %v, want ErrClosed", err)
			}
		})
	}
}
