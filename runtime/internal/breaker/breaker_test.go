package breaker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// errUnavailable stands for the runtime's ErrUnavailable.
var errUnavailable = errors.New("Redis unavailable")

// fixture is a Breaker alone, with what a hub would give it: goroutines
// the test's end waits for, as the hub's close does.
type fixture struct {
	b *Breaker
	g group.Group // goroutines the test's end waits for
}

// newFixture returns the breaker of the node called name, which ping
// asks, on the clock now; it stops, and its goroutines are waited for,
// when t ends.
func newFixture(t *testing.T, name string, now func() time.Time, ping func(context.Context) error) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{}
	cfg := &Config{Now: now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Spawn: f.g.Go, Unavailable: errUnavailable}
	f.b = New(ctx, name, ping, cfg)
	t.Cleanup(func() {
		cancel()
		f.g.Close()
	})
	return f
}

// probeOf returns the ping of a probe client of srv, closed when t ends.
func probeOf(t *testing.T, srv *redistest.Server) func(context.Context) error {
	probe := redis.NewClient(ProbeOptions(&redis.Options{Addr: srv.Addr}))
	t.Cleanup(func() { probe.Close() })
	return func(ctx context.Context) error { return probe.Ping(ctx).Err() }
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.WaitFor(t, what, cond)
}

// A breaker alone against a real redis-server: a command that fails on
// the killed server has the node pinged, and the failed ping opens the
// breaker, so the calls after it are refused at once with an error that
// wraps the runtime's sentinel, names the node and says what was last
// seen of it. Once the server is back, the probe closes the breaker
// within a few pings.
func TestABreakerOpensOnAKilledServerAndClosesWhenItAnswersAgain(t *testing.T) {
	srv := redistest.Start(t)
	f := newFixture(t, srv.Addr, time.Now, probeOf(t, srv))
	b := f.b
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if b.Down(ctx) || b.Unreachable() {
		t.Fatal("the breaker of a node that answers is open")
	}

	srv.Kill()
	err := rdb.Get(ctx, "k").Err()
	if !ConnectionFailure(err) {
		t.Fatalf("a GET of a killed server failed with %v, not a connection failure", err)
	}
	b.Failed(ctx, err) // waits for the verdict
	if !b.Unreachable() || b.UnreachableSince().IsZero() {
		t.Fatal("the breaker is closed after a command and a ping failed on a killed server")
	}
	select {
	case <-b.WhenOpened():
	default:
		t.Fatal("WhenOpened is not closed with the breaker open")
	}
	if !b.Down(ctx) {
		t.Fatal("a killed server's node is not down")
	}
	refused := b.Unavailable()
	if !errors.Is(refused, errUnavailable) || !strings.Contains(refused.Error(), srv.Addr) || !strings.Contains(refused.Error(), "(last error: ") || !strings.Contains(refused.Error(), "connection refused") {
		t.Fatalf("refused with %q: want the sentinel, the node's address and what it last said", refused)
	}
	if ConnectionFailure(refused) {
		t.Fatal("a refusal counts as a connection failure: an open breaker would keep itself open")
	}

	srv.Restart(t)
	waitFor(t, "the probe to close the breaker", func() bool { return !b.Unreachable() })
	if !b.UnreachableSince().IsZero() || b.Down(ctx) || !b.Answering(time.Now()) {
		t.Fatalf("after the node answered again: down since %v, down %v, answering %v", b.UnreachableSince(), b.Down(ctx), b.Answering(time.Now()))
	}
}

// A session's report that a frozen server left its PING unanswered opens
// the breaker once the node's own pings go unanswered too, and the probe
// closes it once the server thaws.
func TestASilenceConfirmedByPingsOpensTheBreaker(t *testing.T) {
	srv := redistest.Start(t)
	f := newFixture(t, srv.Addr, time.Now, probeOf(t, srv))
	b := f.b
	srv.Hang(t)
	b.Heard(NoAnswer{Waited: AnswerWithin}, time.Now())
	waitFor(t, "the pings to confirm the silence", func() bool { return b.Unreachable() })
	srv.Thaw()
	waitFor(t, "the probe to close the breaker", func() bool { return !b.Unreachable() })
}

// One PING of a session left unanswered does not open the breaker by
// itself: the node is pinged, answers, and calls go on to Redis.
func TestOneUnansweredSessionPingOpensNoBreaker(t *testing.T) {
	srv := redistest.Start(t)
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	f := newFixture(t, srv.Addr, clock.Now, probeOf(t, srv))
	b := f.b
	b.Heard(NoAnswer{Waited: AnswerWithin}, clock.Now())
	waitFor(t, "the node's check", func() bool { return !b.confirming.Load() })
	if b.Unreachable() || b.Down(context.Background()) {
		t.Fatal("one unanswered session PING opened the breaker of a node that answers")
	}
}

// A read that waits for a ping already in flight, and whose context ends
// first, is told "not down": told "down", it would be answered from a copy
// nobody vouches for, when the node may well be answering. It fails on its
// context instead. The asker's own ping is not cut short by the waiter.
func TestAReaderWhoseContextEndsIsNotToldDown(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	release, pinging := make(chan struct{}), make(chan struct{})
	began := sync.OnceFunc(func() { close(pinging) }) // Check pings twice
	b := newFixture(t, "held", clock.Now, func(context.Context) error {
		began()
		<-release
		return errors.New("no answer")
	}).b
	b.open(clock.Now())
	first := make(chan bool)
	go func() { first <- b.ask(context.Background()) }()
	<-pinging
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if b.ask(ended) {
		t.Fatal("a waiter whose context ended was told the node is down")
	}
	close(release)
	if !<-first {
		t.Fatal("the asker whose ping failed was told the node answers")
	}
}
