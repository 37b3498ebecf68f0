package runtime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest/proxy"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
)

// The helpers of the runtime's tests: the profile entity, a Cache on a
// real Redis with a manual clock (env), and the waits the tests judge
// events by.

func TestMain(m *testing.M) { redistest.Main(m) }

// profile has every kind of field a clone must copy deeply.
type profile struct {
	ID    int64
	Name  string
	Tags  []string
	Attrs map[string]string
	Best  *profile
}

func cloneProfile(p *profile) *profile {
	if p == nil {
		return nil
	}
	c := *p
	if p.Tags != nil {
		c.Tags = append([]string(nil), p.Tags...)
	}
	if p.Attrs != nil {
		c.Attrs = make(map[string]string, len(p.Attrs))
		for k, v := range p.Attrs {
			c.Attrs[k] = v
		}
	}
	c.Best = cloneProfile(p.Best)
	return &c
}

// profileGlue keys profiles by their Redis key itself.
var profileGlue = Glue[string, profile]{Key: ident, Clone: cloneProfile, Prefix: "p:"}

func sample(id int64, name string) *profile {
	return &profile{ID: id, Name: name, Tags: []string{"a", "b"}, Attrs: map[string]string{"x": "1"}, Best: &profile{ID: id + 1, Name: "best"}}
}

type env struct {
	t     *testing.T
	c     *Cache[string, profile]
	clock *fakeclock.Clock
	raw   *redis.Client // another client, as another process would be
	ctx   context.Context
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newEnv returns a Cache on a private Redis with a manual clock. hot_qps is
// 100 so that 100 reads in one slot promote a key inline.
func newEnv(t *testing.T, opts ...Option) *env {
	t.Helper()
	return newEnvOn(t, redistest.Start(t), opts...)
}

// newEnvOn is newEnv on a server the test controls.
func newEnvOn(t *testing.T, srv *redistest.Server, opts ...Option) *env {
	t.Helper()
	return newEnvClient(t, srv, srv.Client(t), opts...)
}

// newEnvClient is newEnvOn through rdb, a client of srv the test made.
func newEnvClient(t *testing.T, srv *redistest.Server, rdb redis.UniversalClient, opts ...Option) *env {
	t.Helper()
	clk := fakeclock.New(epoch)
	// Invalidation is off unless a test turns it on: it drops local copies
	// asynchronously, and the tests of invalidation check that on purpose.
	base := []Option{WithEntity("profile"), withClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateOff)}
	c, err := New(rdb, profileGlue, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &env{t: t, c: c, clock: clk, raw: srv.Client(t), ctx: context.Background()}
}

func (e *env) put(key string, v *profile) {
	e.t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.raw.Set(e.ctx, key, b, 0).Err(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) get(key string) *profile {
	e.t.Helper()
	v, err := e.c.Get(e.ctx, key)
	if err != nil {
		e.t.Fatalf("Get(%q): %v", key, err)
	}
	return v
}

// heat reads key until it is hot and held locally.
func (e *env) heat(key string) {
	e.t.Helper()
	for range 101 {
		e.get(key)
	}
	if e.c.e.Detector().Lookup(key) == nil {
		e.t.Fatalf("%q not hot after 101 reads", key)
	}
	if !holds(e.c.e, key) {
		e.t.Fatalf("%q hot but not held locally", key)
	}
	// A keyed node verifies a copy once its key is tracked: the read
	// after the confirmation keeps it verified.
	if n := e.c.e.Copies().Nodes.Of(key); n.Keyed() && n.State()&1 == 1 {
		waitFor(e.t, key+" tracked and served locally", func() bool {
			ok := servesLocally(e.c.e, key)
			if !ok {
				e.get(key)
			}
			return ok
		})
	}
}

// holds reports whether c keeps a local copy of key, without counting a
// hit as local.Get would.
func holds[K comparable, V any](c *engine.Cache[K, V], key K) (found bool) {
	c.Copies().Local.Range(func(k K, _ *fresh.Copy[V]) bool {
		found = k == key
		return !found
	})
	return found
}

// servesLocally reports whether c holds a copy of key that a read would
// be answered with while Redis answers.
func servesLocally[K comparable, V any](c *engine.Cache[K, V], key K) (ok bool) {
	c.Copies().Local.Range(func(k K, cp *fresh.Copy[V]) bool {
		if k == key {
			ok = cp.Meta.Verified()
		}
		return k != key
	})
	return ok
}

// tick advances the clock by d, runs the background work due then, and
// waits for the jobs it started.
func (e *env) tick(d time.Duration) { tickAndWait(e.c, e.clock.Advance(d)) }

// tickAndWait runs c's tick at now and waits for the jobs it started,
// which run on goroutines of their own (see background.Job).
func tickAndWait[K comparable, V any](c *Cache[K, V], now time.Time) { c.e.Tick(now) }

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// linesWith returns the lines logged so far that contain s.
func (s *syncBuffer) linesWith(sub string) []string {
	var out []string
	for _, l := range strings.Split(s.String(), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// liveSessions has the node of every key of c start its session, as the
// first copy of one of its keys would (Node.Want; on a cluster, once its
// topology is read), and waits until n sessions are live: a test's
// precondition where sessions start with the first copy.
func liveSessions[K comparable, V any](t *testing.T, c *Cache[K, V], n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d live sessions", n), func() bool {
		for _, nd := range c.e.Copies().Nodes.All() {
			nd.Want()
		}
		return c.Stats().InvalidationLive == n
	})
}

// waitFor polls cond until it holds; goroutines reach a state in their own
// time, and only a deadline far beyond any normal run fails the test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 10*time.Second, what, cond)
}

// waitWithin is waitFor with the deadline d.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// eventually reads key until it returns name, and fails if it still does
// not after settle: refresh, the only other way a change arrives, is far
// off on the tests' manual clock.
func (e *env) eventually(key, name, when string) {
	e.t.Helper()
	deadline := time.Now().Add(settle)
	for {
		v, err := e.c.Get(e.ctx, key)
		if err == nil && v.Name == name {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: %s still reads %+v, %v after %v; want %q", when, key, v, err, settle, name)
		}
		time.Sleep(time.Millisecond)
	}
}

// instances returns n caches on one server, each with its own client, as n
// replicas of a service would be, with invalidation in mode; each holds
// "p:1" hot and local.
func instances(t *testing.T, srv *redistest.Server, n int, mode string) []*env {
	t.Helper()
	var es []*env
	for range n {
		e := newEnvOn(t, srv, WithInvalidate(mode))
		liveSessions(t, e.c, 1)
		es = append(es, e)
	}
	es[0].put("p:1", sample(1, "v1"))
	for _, e := range es {
		e.heat("p:1")
	}
	return es
}

// dropped waits until e no longer serves key locally.
func dropped(t *testing.T, e *env, key string) {
	t.Helper()
	waitFor(t, "the local copy of "+key+" to be invalidated", func() bool { return !servesLocally(e.c.e, key) })
}

// infoStat returns the field of INFO section on rdb's server, as a number.
func infoStat(t *testing.T, rdb *redis.Client, section, field string) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("INFO %s %s: %v", section, field, err)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// ident names a string key by itself, as tests key caches by Redis key.
func ident(s string) string { return s }

// proxied returns a proxy in front of srv, and a client that reaches srv
// through it, both closed when t ends: the network a test slows or cuts.
func proxied(t *testing.T, srv *redistest.Server) (*proxy.Proxy, *redis.Client) {
	t.Helper()
	p, err := proxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	t.Cleanup(func() { rdb.Close() })
	return p, rdb
}

// heldEnv is an env in tracking mode whose invalidation session can be
// held up, as a loaded machine's scheduler holds a goroutine: holdOn
// stops the session in its handling of a write, release lets it go on.
type heldEnv struct {
	*env
	holding atomic.Bool
	in      chan struct{}
	release func()
}

func newHeldEnv(t *testing.T, srv *redistest.Server, opts ...Option) *heldEnv {
	t.Helper()
	h := &heldEnv{in: make(chan struct{}, 1)}
	out := make(chan struct{})
	h.release = sync.OnceFunc(func() { h.holding.Store(false); close(out) })
	held := func(c *Config) {
		c.Test.OnInvalidate = func([]string) {
			if h.holding.Load() {
				h.in <- struct{}{}
				<-out
			}
		}
	}
	h.env = newEnvOn(t, srv, append([]Option{WithInvalidate(InvalidateTracking), held}, opts...)...)
	t.Cleanup(h.release) // before the Cache closes: cleanups run last-in first-out
	return h
}

// holdOn writes v at key as another program does, and returns once the
// session is held in its handling of the write.
func (h *heldEnv) holdOn(key string, v *profile) {
	h.holding.Store(true)
	h.put(key, v)
	<-h.in
}

// twoHot waits for the session, then makes p:1 (v1) and p:2 (w1) hot and
// served from memory: p:2's write is the one holdOn holds the session on,
// p:1 the key the test reads.
func (h *heldEnv) twoHot() {
	h.t.Helper()
	liveSessions(h.t, h.c, 1)
	h.put("p:1", sample(1, "v1"))
	h.put("p:2", sample(2, "w1"))
	h.heat("p:1")
	h.heat("p:2")
}

// commandCalls returns how many times the server ran cmd (INFO
// commandstats), scripts' calls included.
func commandCalls(t *testing.T, rdb *redis.Client, cmd string) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatalf("INFO commandstats %s: %v", cmd, err)
			}
			return n
		}
	}
	return 0
}

// alternate runs one and other b.N times each, taking turns in both
// orders so that the machine's drift hits both alike, and returns the
// time each measured of itself: a paired benchmark's two sides.
func alternate(b *testing.B, one, other func() time.Duration) (tOne, tOther time.Duration) {
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			tOne += one()
			tOther += other()
		} else {
			tOther += other()
			tOne += one()
		}
	}
	return tOne, tOther
}

// readsAfterAWrite reads with read, once a millisecond, from the write's
// acknowledgement for settle and 200 ms more: read says whether what it
// read is the written value, or returns an error the reader must never
// see. A read beginning settle after the acknowledgement must be the
// written value. It returns when the first one was.
func readsAfterAWrite(t *testing.T, read func() (fresh bool, got any, err error)) (first time.Duration) {
	t.Helper()
	acked := time.Now()
	for time.Since(acked) < settle+200*time.Millisecond {
		began := time.Since(acked)
		fresh, got, err := read()
		switch {
		case err != nil:
			t.Fatalf("the other build's read %v after the write: %v", began, err)
		case fresh && first == 0:
			first = time.Since(acked)
		case !fresh && began >= settle:
			t.Fatalf("the other build's read %v after the write returned %+v; want the written value", began, got)
		}
		time.Sleep(time.Millisecond)
	}
	return first.Round(100 * time.Microsecond)
}

// pairedWrites alternates the writes with and without the neighbouring
// versions' deletions and reports both and their ratio.
func pairedWrites(b *testing.B, beside, alone func() time.Duration) {
	tBeside, tAlone := alternate(b, beside, alone)
	b.ReportMetric(float64(tBeside.Nanoseconds())/float64(b.N), "neighbours-ns/op")
	b.ReportMetric(float64(tAlone.Nanoseconds())/float64(b.N), "alone-ns/op")
	b.ReportMetric(float64(tBeside)/float64(tAlone), "neighbours/alone")
}

// withClock is the Option of a Cache on clk, not the wall clock: a seam of
// the tests, which the API does not offer.
func withClock(clk config.Clock) Option { return func(c *Config) { c.Clock = clk } }
