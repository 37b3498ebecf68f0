package track

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"

	"github.com/redis/go-redis/v9"
)

// recorder is a Store that records what the hub tells it, and holds
// copies of the keys in hot.
type recorder struct {
	mu      sync.Mutex
	changed []string
	flushes int
	lives   int
	tracked []string
	hot     []string
	got     chan struct{} // signalled on every call
}

func newRecorder() *recorder { return &recorder{got: make(chan struct{}, 1)} }

func (r *recorder) signal() {
	select {
	case r.got <- struct{}{}:
	default:
	}
}

func (r *recorder) Changed(keys []string, flush bool) {
	r.mu.Lock()
	r.changed = append(r.changed, keys...)
	if flush {
		r.flushes++
	}
	r.mu.Unlock()
	r.signal()
}

func (r *recorder) Live(context.Context, *Node) {
	r.mu.Lock()
	r.lives++
	r.mu.Unlock()
	r.signal()
}

func (r *recorder) Tracked(_ *Node, keys []string) {
	r.mu.Lock()
	r.tracked = append(r.tracked, keys...)
	r.mu.Unlock()
	r.signal()
}

func (r *recorder) Moved(func(string) bool) {}
func (r *recorder) Settled(context.Context) {}
func (r *recorder) Hot() []string           { r.mu.Lock(); defer r.mu.Unlock(); return slices.Clone(r.hot) }
func (r *recorder) keys() []string          { r.mu.Lock(); defer r.mu.Unlock(); return slices.Clone(r.changed) }
func (r *recorder) flushed() int            { r.mu.Lock(); defer r.mu.Unlock(); return r.flushes }

func hubOptions(mode string) Options {
	return Options{Mode: mode, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Unavailable: errors.New("unavailable")}
}

// holding makes r hold copies of keys, or none.
func (r *recorder) holding(keys ...string) { r.mu.Lock(); r.hot = keys; r.mu.Unlock() }

// join joins s to rdb's hub for prefix, and leaves when the test ends.
func join(t *testing.T, rdb redis.UniversalClient, mode, prefix string, s Store) *Hub {
	t.Helper()
	h, err := Join(rdb, hubOptions(mode), prefix, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Leave(s) })
	return h
}

// Every write reaches the stores whose prefix its key has, and only
// those, on one session per client, in both invalidation modes; a flush
// reaches every store.
func TestAHubRoutesEachKeyToTheStoresOfItsPrefix(t *testing.T) {
	for _, mode := range []string{Tracking, PubSub} {
		t.Run(mode, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			a, b, ax := newRecorder(), newRecorder(), newRecorder()
			h := join(t, rdb, mode, "a:", a)
			if join(t, rdb, mode, "b:", b) != h || join(t, rdb, mode, "a:x:", ax) != h {
				t.Fatal("stores on one client and options got hubs of their own")
			}
			// With tracking a session hears only the keys whose copies are
			// kept: c:1's write is heard by nobody.
			a.holding("a:1")
			b.holding("b:1", "b:2")
			ax.holding("a:x:1")
			h.Nodes.One.Want()
			redistest.WaitFor(t, "live session", func() bool { return h.Live() == 1 && h.Nodes.One.State()&1 == 1 })
			write := func(key string) {
				if err := rdb.Set(t.Context(), key, "v", 0).Err(); err != nil {
					t.Fatal(err)
				}
				if mode == PubSub { // only the repositories' announcements, on their entity's channel
					for _, p := range []string{"a:x:", "a:", "b:"} {
						if strings.HasPrefix(key, p) {
							rdb.Publish(t.Context(), Channel(p), key)
							break
						}
					}
				}
			}
			for _, k := range []string{"c:1", "a:1", "b:1", "a:x:1", "b:2"} {
				write(k)
			}
			redistest.WaitFor(t, "every write heard", func() bool { return len(b.keys()) == 2 && slices.Contains(ax.keys(), "a:x:1") })
			if got := a.keys(); !slices.Equal(got, []string{"a:1", "a:x:1"}) {
				t.Errorf("store a: heard %v, want [a:1 a:x:1]", got)
			}
			if got := b.keys(); !slices.Equal(got, []string{"b:1", "b:2"}) {
				t.Errorf("store b: heard %v, want [b:1 b:2]", got)
			}
			if got := ax.keys(); !slices.Equal(got, []string{"a:x:1"}) {
				t.Errorf("store a:x: heard %v, want [a:x:1]", got)
			}
			if mode == Tracking {
				rdb.FlushAll(t.Context())
				redistest.WaitFor(t, "the flush heard by every store", func() bool { return a.flushed() == 1 && b.flushed() == 1 && ax.flushed() == 1 })
			}
			if h.Live() != 1 {
				t.Errorf("%d sessions live, want one for three stores", h.Live())
			}
		})
	}
}

// A store whose prefix the live session does not listen for must not be
// vouched for by it: with Pub/Sub its coverage ends before Join returns,
// and a new session listening to both channels starts. A keyed session
// (tracking on a single server) listens for keys, not prefixes: a new
// store's copies are tracked as they are kept, and nothing restarts.
func TestAStoreWithANewPrefixEndsTheSessionThatDoesNotListenForIt(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		restart bool
	}{
		{PubSub, true},
		{Tracking, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			a, b := newRecorder(), newRecorder()
			h := join(t, rdb, tc.mode, "a:", a)
			a.holding("a:1")
			n := h.Nodes.One
			n.Want()
			redistest.WaitFor(t, "live session", func() bool { return n.State()&1 == 1 })
			before := n.State()
			join(t, rdb, tc.mode, "b:", b)
			if moved := n.State() != before; moved != tc.restart {
				t.Fatalf("the session's coverage ended as b's store joined: %v, want %v", moved, tc.restart)
			}
			redistest.WaitFor(t, "a session covering both", func() bool { return n.State()&1 == 1 })
			b.holding("b:1")
			n.Track("b:1")
			redistest.WaitFor(t, "b:1 tracked, or listened for", func() bool {
				b.mu.Lock()
				defer b.mu.Unlock()
				return tc.mode == PubSub || slices.Contains(b.tracked, "b:1")
			})
			for _, k := range []string{"b:1", "a:1"} {
				rdb.Set(t.Context(), k, "v", 0)
				if tc.mode == PubSub {
					rdb.Publish(t.Context(), Channel(k[:2]), k)
				}
			}
			redistest.WaitFor(t, "both writes heard", func() bool { return len(a.keys()) == 1 && len(b.keys()) == 1 })

			// A third store restarts a channel listener, not a keyed one.
			now := n.State()
			join(t, rdb, tc.mode, "a:y:", newRecorder())
			if moved := n.State() != now; moved != tc.restart {
				t.Fatalf("the session's coverage ended as a third store joined: %v, want %v", moved, tc.restart)
			}
		})
	}
}

// Hubs are shared by client and options: another client, or another
// mode, gets a hub of its own, and the last store to leave stops it.
func TestHubsAreSharedByClientAndOptions(t *testing.T) {
	srv := redistest.Start(t)
	one, two := srv.Client(t), srv.Client(t)
	h1 := join(t, one, Tracking, "a:", newRecorder())
	for _, tc := range []struct {
		name string
		rdb  redis.UniversalClient
		mode string
		same bool
	}{
		{"the same client and options", one, Tracking, true},
		{"another client of the same server", two, Tracking, false},
		{"another mode", one, PubSub, false},
	} {
		if got := join(t, tc.rdb, tc.mode, "a:", newRecorder()) == h1; got != tc.same {
			t.Errorf("%s: shared %v, want %v", tc.name, got, tc.same)
		}
	}
	s := newRecorder()
	h, err := Join(one, hubOptions(Off), "z:", s)
	if err != nil {
		t.Fatal(err)
	}
	h.Leave(s)
	if s2 := newRecorder(); join(t, one, Off, "z:", s2) == h {
		t.Fatal("a hub whose last store left was handed out again")
	}
}

// A session outlives its node's last copy by 5 s (docs/capacity.md: "from
// the first copy until 5 s after the last"), no less, so that a key that
// cools and warms again does not start a session each time, and no more,
// so that an instance that holds nothing costs the node nothing soon. The
// times are the promise's, not lingerFor: loosened or tightened, it fails.
func TestASessionLingersFiveSecondsAfterTheLastCopy(t *testing.T) {
	srv := redistest.Start(t)
	h := join(t, srv.Client(t), Tracking, "a:", newRecorder()) // holding nothing
	for _, tc := range []struct {
		lastCopy time.Duration // how long ago a copy was last seen kept
		over     bool
	}{
		{lastCopy: 4 * time.Second, over: false},
		{lastCopy: 5 * time.Second, over: true},
	} {
		g := &lingering{h: h, held: time.Now().Add(-tc.lastCopy)} // checked long ago
		if got := g.over(); got != tc.over {
			t.Errorf("the last copy kept %v ago: the session's linger over = %v, want %v", tc.lastCopy, got, tc.over)
		}
	}
}

// A node none of whose keys has a copy costs Redis nothing: no session
// until the first copy is about to be kept (Want), and none lingerFor
// after the last is gone (Options.Linger here), in both invalidation
// modes; meanwhile the node counts as covered (it is idle, not down).
func TestANodeHasASessionOnlyWhileCopiesOfItsKeysAreKept(t *testing.T) {
	for _, mode := range []string{Tracking, PubSub} {
		t.Run(mode, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			a := newRecorder()
			opts := hubOptions(mode)
			opts.Linger = 50 * time.Millisecond
			h, err := Join(rdb, opts, "a:", a)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Leave(a) })
			n := h.Nodes.One
			if h.Live() != 0 || !n.UncoveredSince().IsZero() {
				t.Fatalf("with no copy: %d sessions live, uncovered since %v; want none, never", h.Live(), n.UncoveredSince())
			}
			a.holding("a:1")
			n.Want()
			redistest.WaitFor(t, "the session the first copy wants", func() bool { return h.Live() == 1 })
			a.holding()
			redistest.WaitFor(t, "the session to end with the last copy", func() bool { return h.Live() == 0 && n.idle.Load() })
			if !n.UncoveredSince().IsZero() {
				t.Fatalf("an idle node is uncovered since %v, want never: nothing is kept to cover", n.UncoveredSince())
			}
			admin := srv.Client(t)
			pings := redistest.CommandStat(t, admin, "ping", "calls")
			for range 5 {
				time.Sleep(VouchEvery) // a poll: the count may only stay
			}
			if got := redistest.CommandStat(t, admin, "ping", "calls"); got != pings {
				t.Fatalf("an idle node was sent %d PINGs in five of a session's periods, want none", got-pings)
			}
			a.holding("a:1")
			n.Want()
			redistest.WaitFor(t, "a session again for the next copy", func() bool { return h.Live() == 1 })
		})
	}
}
