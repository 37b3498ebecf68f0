package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// gateHook holds every GET until release is closed, and counts them. With
// replies set, it lets the GETs reach Redis and holds the first one's
// reply instead: a read answered before a write, delivered after it.
type gateHook struct {
	gets    atomic.Int32
	release chan struct{}
	replies bool
}

func (h *gateHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *gateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *gateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "get" {
			return next(ctx, cmd)
		}
		if h.replies {
			err := next(ctx, cmd)
			if h.gets.Add(1) == 1 {
				<-h.release
			}
			return err
		}
		h.gets.Add(1)
		<-h.release
		return next(ctx, cmd)
	}
}

func TestConcurrentMissesShareOneRead(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	e.c.e.Copies().Local.Delete("p:1") // as if evicted: the next reads miss

	hook := &gateHook{release: make(chan struct{})}
	e.c.e.Client().AddHook(hook)

	const callers = 50
	missTogether(t, e, "p:1", "ada", callers, func() { close(hook.release) })
	if n := hook.gets.Load(); n != 1 {
		t.Fatalf("%d concurrent misses made %d Redis reads, want 1", callers, n)
	}
	if !holds(e.c.e, "p:1") {
		t.Fatal("the shared read was not stored locally")
	}
}

// missTogether has callers read key at once while its load is held back,
// plus one caller that gives up: that one returns at once with its
// context's error, and once release lets the load go, every other caller
// gets want.
func missTogether(t *testing.T, e *env, key, want string, callers int, release func()) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := e.c.Get(e.ctx, key)
			if err == nil && v.Name != want {
				err = errors.New("got " + v.Name)
			}
			errs <- err
		}()
	}
	impatient, cancel := context.WithCancel(e.ctx)
	gaveUp := make(chan error, 1)
	go func() { _, err := e.c.Get(impatient, key); gaveUp <- err }()
	waitFor(t, "every caller to join one load", func() bool { return e.flightWaiters(key) == int32(callers)+1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up got %v, want context.Canceled", err)
	}
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) flightWaiters(key string) int32 {
	f, _ := e.c.e.InFlight(key)
	return f.Waiters
}
