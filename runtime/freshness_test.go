package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// These tests attack the freshness protocol (internal/fresh) and the breaker
// (internal/breaker) with the faults of issue 11, each checking what a read
// returns. Each would fail on the runtime before the protocol: the finding
// it reproduces is named in its comment.

// The promise is that a read beginning 50 ms after a write was
// acknowledged returns it. These tests check what must hold whatever the
// machine's load: a copy nobody vouches for is never served, and a write
// is seen long before refresh would bring it (they wait up to settle for
// it); the history checker (internal/testing/soak) measures the bound itself.
const settle = time.Second

// gatedDialer delays every new connection while closed is set, as a slow
// network or a busy server does, until the gate opens.
type gatedDialer struct {
	closed atomic.Bool
	open   chan struct{}
}

func newGatedDialer() *gatedDialer { return &gatedDialer{open: make(chan struct{})} }

func (g *gatedDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.closed.Load() {
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// gatedEnv is an env in tracking mode whose client dials through g; the
// client's one connection is made first, so reads go on while new
// connections (the runtime's own) wait when the gate is closed. gated
// closes it before the Cache is made.
func gatedEnv(t *testing.T, srv *redistest.Server, g *gatedDialer, gated bool, opts ...Option) *env {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Dialer: g.dial, PoolSize: 1, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	g.closed.Store(gated)
	return newEnvClient(t, srv, rdb, append([]Option{WithInvalidate(InvalidateTracking)}, opts...)...)
}

// wants reads key and fails unless it returns name.
func (e *env) wants(key, name, when string) {
	e.t.Helper()
	if got := e.get(key); got.Name != name {
		e.t.Fatalf("%s: %s reads %q, want %q", when, key, got.Name, name)
	}
}

// Finding 1: New returned before tracking was on, readers stored copies at
// once, and a write in that window was never announced to them.
func TestNoCopyIsServedBeforeTrackingIsOn(t *testing.T) {
	srv := redistest.Start(t)
	g := newGatedDialer()
	// The reads go through the pool, whose one connection is made: the
	// automatic pipeline's own would wait at the gate with the session.
	e := gatedEnv(t, srv, g, true, WithAutoPipeline(false)) // the runtime's subscriber waits at the gate
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	e.put("p:1", sample(1, "v2")) // tracking is not on: nobody tells the copy
	e.wants("p:1", "v2", "a write before tracking was on")

	close(g.open) // the session starts; reads go on without waiting for it
	for _, name := range []string{"v3", "v4", "v5"} {
		e.put("p:1", sample(1, name))
		e.eventually("p:1", name, "a write once tracking may be on")
		e.heat("p:1")
	}
}

// Findings 2 and 6: after a lost session, readers stored copies again at
// once, and a write before the new session started was never seen; losing
// only the tracking connection went unnoticed for a second.
func TestNoCopyIsServedWhileTheSessionIsDown(t *testing.T) {
	srv := redistest.Start(t)
	g := newGatedDialer()
	e := gatedEnv(t, srv, g, false)
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")

	g.closed.Store(true) // the session cannot come back until the gate opens
	// Kill the connection that carries tracking, and nothing else.
	for line := range strings.Lines(e.raw.ClientList(e.ctx).Val()) {
		if strings.Contains(line, "flags=Pt") {
			id := strings.Fields(line)[0][len("id="):]
			if err := e.raw.Do(e.ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.put("p:1", sample(1, "v2"))
	e.eventually("p:1", "v2", "a write just after the session was lost")
	for _, name := range []string{"v3", "v4"} {
		e.heat("p:1") // readers keep trying to hold it locally
		e.put("p:1", sample(1, name))
		e.wants("p:1", name, "a write while the session is down") // at once: no copy is vouched for
	}
	close(g.open)
	liveSessions(t, e.c, 1)
	e.heat("p:1")
	e.put("p:1", sample(1, "v5"))
	e.eventually("p:1", "v5", "a write after the session came back")
}

// Finding 5: FLUSHALL arrived as an invalidation the session could not
// parse, and reset it.
func TestFlushAllDropsEveryCopyWithoutAReset(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking))
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	if err := e.raw.FlushAll(e.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the hot key to read as absent", func() bool { _, err := e.c.Get(e.ctx, "p:1"); return errors.Is(err, ErrNotFound) })
	if st := e.c.Stats(); st.InvalidationResets != 0 || st.InvalidationLive != 1 {
		t.Fatalf("FLUSHALL reset the session: resets %d live %d", st.InvalidationResets, st.InvalidationLive)
	}
}

// Finding 4: a caller that had seen an invalidation joined a shared read
// answered before that write, and got the old value.
func TestAReadNeverJoinsAFlightOlderThanAWrite(t *testing.T) {
	srv := redistest.Start(t)
	handled := make(chan []string, 16)
	// Through the pool, where a held reply holds one connection: on the
	// automatic pipeline it would hold every read behind it, and the
	// newer read could not be answered first, as it can be when the older
	// one's goroutine is merely slow to take its reply.
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), WithAutoPipeline(false), func(c *Config) { c.Test.OnInvalidate = func(keys []string) { handled <- keys } })
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1")) // unheard: nobody holds p:1 yet
	e.heat("p:1")
	e.c.e.Copies().Local.Delete("p:1") // as if evicted: the next read misses

	h := &gateHook{release: make(chan struct{}), replies: true}
	e.c.e.Client().AddHook(h)
	release := sync.OnceFunc(func() { close(h.release) })
	t.Cleanup(release) // before Close, which waits for the held read
	old := make(chan string, 1)
	go func() { v, _ := e.c.Get(e.ctx, "p:1"); old <- v.Name }()
	waitFor(t, "a read answered with v1", func() bool { return h.gets.Load() == 1 })

	e.put("p:1", sample(1, "v2")) // another program's write
	<-handled                     // this instance has seen it
	ctx, cancel := context.WithTimeout(e.ctx, settle)
	defer cancel()
	if v, err := e.c.Get(ctx, "p:1"); err != nil || v.Name != "v2" {
		t.Fatalf("a read after an invalidation, with an older read in flight: %+v, %v; want v2", v, err)
	}
	release()
	if got := <-old; got != "v1" {
		t.Fatalf("the older read returned %q", got)
	}
	e.wants("p:1", "v2", "after the older read finished")
}

// On a keyed node a copy is verified only once its key is tracked: one
// kept before would not hear the writes Redis takes meanwhile. Here the
// session is never asked to track the key (its requests are dropped):
// the copy is kept, but no read is served from it, and another program's
// write is read at once.
func TestACopyWhoseKeyIsNotTrackedIsNotServed(t *testing.T) {
	srv := redistest.Start(t)
	var asked atomic.Int32
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), func(c *Config) {
		c.Test.TrackVia = func([]string, func([]string)) { asked.Add(1) }
	})
	liveSessions(t, e.c, 1) // before p:1 is hot: the session starts tracking nothing
	e.put("p:1", sample(1, "v1"))
	for range 101 {
		e.get("p:1")
	}
	if !holds(e.c.e, "p:1") || asked.Load() == 0 || servesLocally(e.c.e, "p:1") {
		t.Fatalf("held %v, tracking asked %d times, served locally %v; want held, asked, not served", holds(e.c.e, "p:1"), asked.Load(), servesLocally(e.c.e, "p:1"))
	}
	e.put("p:1", sample(1, "v2")) // unheard: nobody tracks p:1
	e.wants("p:1", "v2", "another program's write of a key no session tracks")
}

// A read begun before its key's tracking was confirmed may have been
// answered before Redis tracked the key, with a value older than a write
// Redis took between the two, which no invalidation will ever name: its
// copy must not be kept verified. The confirmation moves the key's
// generation on (copies.Tracked), so such a read keeps nothing.
func TestAReadBegunBeforeItsKeyWasTrackedKeepsNoVerifiedCopy(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	var held []func()
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), WithAutoPipeline(false), func(c *Config) {
		c.Test.TrackVia = func(keys []string, track func([]string)) {
			mu.Lock()
			defer mu.Unlock()
			held = append(held, func() { track(keys) })
		}
	})
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	for range 101 {
		e.get("p:1")
	}
	e.c.e.Copies().Local.Delete("p:1") // as if evicted: the next read misses

	h := &gateHook{release: make(chan struct{}), replies: true}
	e.c.e.Client().AddHook(h)
	release := sync.OnceFunc(func() { close(h.release) })
	t.Cleanup(release)
	old := make(chan string, 1)
	go func() { v, _ := e.c.Get(e.ctx, "p:1"); old <- v.Name }()
	waitFor(t, "a read answered with v1", func() bool { return h.gets.Load() == 1 })
	e.put("p:1", sample(1, "v2")) // before Redis tracks p:1: nobody hears it

	mu.Lock()
	for _, f := range held {
		f()
	}
	held = nil
	mu.Unlock()
	entry := e.c.e.Detector().Lookup("p:1")
	waitFor(t, "p:1 tracked", func() bool {
		entry.Mu.Lock()
		defer entry.Mu.Unlock()
		state, _ := entry.Confirmed()
		return state != 0
	})
	release()
	if got := <-old; got != "v1" {
		t.Fatalf("the older read returned %q", got)
	}
	e.wants("p:1", "v2", "after a read begun before its key was tracked finished")
}

// Read-your-writes: the same with the instance's own write, which must
// not be overtaken by the older read storing its value.
func TestOwnWriteIsNotOvertakenByAnOlderRead(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	e.c.e.Copies().Local.Delete("p:1")

	h := &gateHook{release: make(chan struct{}), replies: true}
	e.c.e.Client().AddHook(h)
	done := make(chan struct{})
	go func() { e.c.Get(e.ctx, "p:1"); close(done) }()
	waitFor(t, "a read answered with v1", func() bool { return h.gets.Load() == 1 })
	if err := e.c.Set(e.ctx, "p:1", sample(1, "v2")); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	<-done
	for range 10 {
		e.wants("p:1", "v2", "after the older read stored what it read")
	}
}

// Finding 3: losing the invalidation connection dropped every copy, so an
// outage served no hot read; finding 8: cold reads waited on the client's
// retries for up to seconds.
func TestHotKeysAreServedThroughAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking))
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")

	srv.Kill()
	e.c.Get(e.ctx, "p:2") // the first failure opens the breaker
	for i := range 100 {
		v, err := e.c.Get(e.ctx, "p:1")
		if err != nil || v.Name != "v1" {
			t.Fatalf("hot read %d during the outage: %+v, %v", i, v, err)
		}
		if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("cold read %d during the outage = %v, want ErrUnavailable at once", i, err)
		}
		time.Sleep(time.Millisecond)
	}
	if st := e.c.Stats(); st.StaleReads < 100 {
		t.Fatalf("StaleReads = %d, want every hot read of the outage counted", st.StaleReads)
	}

	srv.Restart(t) // empty
	e.put("p:1", sample(1, "v2"))
	waitFor(t, "the hot key to read v2", func() bool { v, err := e.c.Get(e.ctx, "p:1"); return err == nil && v.Name == "v2" })
	for range 50 { // once Redis answers, the old copy is never served again
		e.wants("p:1", "v2", "after the outage")
	}
	if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cold read after the outage = %v, want ErrNotFound", err)
	}
}

// After SIGKILL and a restart, the breaker stayed open until its probe saw
// Redis back, and hot keys were served from copies nobody vouched for
// meanwhile: with readers busy hitting memory, the probe's goroutine
// waited for the CPU for half a second, and another program's writes went
// unseen for as long (the soak's saturating readers). Here the probe is
// all but stopped, and the restarted Redis refuses CLIENT, so no session
// can vouch for the copy either: only the readers can find Redis back.
func TestAnOpenBreakerIsBelievedOnlyBriefly(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking))
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")

	srv.Kill()
	if _, err := e.c.Get(e.ctx, "p:2"); err == nil { // the first failure opens the breaker
		t.Fatal("a cold read of a dead Redis succeeded")
	}
	e.wants("p:1", "v1", "during the outage")
	e.clock.Advance(breaker.StaleLease)
	e.wants("p:1", "v1", "during the outage, once the breaker's evidence is old") // the read asks, and Redis still refuses

	srv.RestartWith(t, "--user", "default", "on", "nopass", "~*", "&*", "+@all", "-client")
	e.put("p:1", sample(1, "v2")) // another program's write
	e.clock.Advance(breaker.StaleLease)
	e.wants("p:1", "v2", "a read StaleLease after another program's write to the restarted Redis")
	if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cold read after the restart = %v, want ErrNotFound", err)
	}
	if st := e.c.Stats(); st.InvalidationLive != 0 {
		t.Fatalf("InvalidationLive = %d; the test needs Redis to refuse the session", st.InvalidationLive)
	}
}

// A session whose goroutine is held up stops vouching for its copies. In
// the soak, a healthy session's goroutine now and then handled an
// invalidation 55 to 90 ms after Redis sent it (the scheduler and the
// garbage collector on two busy cores), and its copies were served stale
// meanwhile. Here the goroutine is held in the invalidation hook, after
// it handled one write and before it can handle the next: another
// program's write with tracking, another repository's with Pub/Sub, whose
// subscriber vouches with the same stamped PINGs.
func TestAHeldUpSessionStopsVouching(t *testing.T) {
	for _, mode := range []string{InvalidateTracking, InvalidatePubSub} {
		t.Run(mode, func(t *testing.T) { heldUpSession(t, mode) })
	}
}

func heldUpSession(t *testing.T, mode string) {
	srv := redistest.Start(t)
	var holding atomic.Bool
	hold, inHold := make(chan struct{}), make(chan struct{}, 1)
	held := func(c *Config) {
		c.Test.OnInvalidate = func([]string) {
			if holding.Load() {
				inHold <- struct{}{}
				<-hold
			}
		}
	}
	e := newEnvOn(t, srv, WithInvalidate(mode), held)
	t.Cleanup(func() { close(hold) }) // before the Cache closes: cleanups run last-in first-out
	write := func(key, name string) { e.put(key, sample(1, name)) }
	if mode == InvalidatePubSub { // only repositories announce their writes
		other := newEnvOn(t, srv, WithInvalidate(mode))
		write = func(key, name string) {
			if err := other.c.Set(e.ctx, key, sample(1, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	liveSessions(t, e.c, 1)
	write("p:1", "v1")
	write("p:2", "w1")
	e.heat("p:1")
	e.heat("p:2")

	// The session handles a write of p:2, and then its goroutine is
	// held, while p:1's copy is verified.
	holding.Store(true)
	write("p:2", "w2")
	<-inHold
	// A session whose next answer is a few milliseconds late still vouches:
	// a busy moment does not send every hot read to Redis.
	e.clock.Advance(busy)
	if cp, ok := e.c.e.Copies().Local.Get("p:1"); !ok || !e.c.e.Copies().Fresh(&cp.Meta) {
		t.Fatalf("%v after the session's last answer, its copies are no longer served from memory", busy)
	}
	// One held up until a read could no longer be within the 50 ms bound
	// of a write it did not handle vouches no more.
	write("p:1", "v3") // sent by Redis, never handled
	e.clock.Advance(bound - busy)
	e.wants("p:1", "v3", "50 ms after the session's last answer, a write it did not handle")
}

// A reader that looked its copy up just before the process stalled, and
// judges it after. The stall aged the session's vouch, so another reader
// read Redis and replaced the copy; then the session caught up: it
// handled the write that made the first copy old, which made the new
// copy unverified, and vouched again. The first reader held the replaced
// copy, which nothing had made unverified, and served it: the checker
// saw it 162.7 ms behind a write on a loaded machine (pubsub-keys, Redis
// 7.0: "instance 1 read key 5 at 12.261107321s and got version 3162").
// Nor is a copy that left served as a stale read when Redis dies instead:
// it is older than what Redis held when it left.
func TestACopyReplacedWhileItsReaderWasHeldUpIsNotServed(t *testing.T) {
	for _, then := range []struct {
		name string
		do   func(t *testing.T, e *env, srv *redistest.Server, release func())
		// stale allows an error in place of v2: Redis is gone.
		stale bool
	}{
		{"the session catches up", func(t *testing.T, e *env, _ *redistest.Server, release func()) {
			release() // the write of p:1, then answers that vouch
			n := e.c.e.Copies().Nodes.Of("p:1")
			waitFor(t, "the session vouching for the node again", func() bool {
				return e.c.e.Copies().Stamps.Now()-n.Vouched() < int64(busy)
			})
		}, false},
		{"Redis is killed", func(t *testing.T, e *env, srv *redistest.Server, _ func()) {
			srv.Kill()
			n := e.c.e.Copies().Nodes.Of("p:1")
			waitFor(t, "the breaker open", func() bool {
				e.c.Get(e.ctx, "p:3") // a cold read's failure opens it
				return n.Unreachable()
			})
		}, true},
	} {
		t.Run(then.name, func(t *testing.T) {
			srv := redistest.Start(t)
			h := newHeldEnv(t, srv)
			e := h.env
			h.twoHot()

			// The session's goroutine is held up handling a write of p:2, and
			// p:1 is written: its invalidation waits on the connection.
			h.holdOn("p:2", sample(2, "w2"))
			e.put("p:1", sample(1, "v2"))
			// Reader B looks p:1 up, and is held up before it judges the copy.
			cp, held := e.c.e.Copies().Local.Get("p:1")
			if !held || cp.Val.Name != "v1" {
				t.Fatalf("before the stall p:1's copy is %v (held %v), want v1", cp, held)
			}
			// The process stalls for 160 ms, as the checker's did: nothing
			// vouched for the node meanwhile, so reader A asks Redis, and
			// keeps what it read.
			e.clock.Advance(160 * time.Millisecond)
			e.wants("p:1", "v2", "a read after the stall")
			then.do(t, e, srv, h.release)
			// Reader B goes on.
			v, err := e.c.e.GetAfterLookup(e.ctx, "p:1", cp, held, false)
			if then.stale && err != nil {
				return
			}
			if err != nil || v.Name != "v2" {
				t.Fatalf("a read that looked p:1 up before the stall returns %v, %v; want v2, written before it began", v, err)
			}
		})
	}
}

// A read that joined another's read of Redis sent long before: CI's make
// test at a12def4 (a cluster, Redis 8.0.2: "instance 2 read key 7 at
// 14.650105982s and got version 4990; version 4993 was acknowledged at
// 14.424895657s, 225.210325ms before"). A read sent its GET, had its
// answer, and the process stalled; a write landed meanwhile, whose
// invalidation the session, stalled too, had not handled; a read that
// began after the stall joined the first, which had seen nothing the
// session had not, and returned its answer, 225 ms older than the write.
// A read joins another only if it was sent within the bound.
func TestAReadNeverJoinsAReadSentLongBefore(t *testing.T) {
	srv := redistest.Start(t)
	h := newHeldEnv(t, srv, WithAutoPipeline(false))
	e := h.env
	h.twoHot()

	// The session is held up, handling a write of p:2, and its last
	// answer ages: p:1's reads go to Redis.
	h.holdOn("p:2", sample(2, "w2"))
	e.clock.Advance(100 * time.Millisecond)
	// Reader A's GET is answered, v1, and A is held up before it is done.
	answered, unblock := make(chan struct{}), make(chan struct{})
	e.c.e.Client().AddHook(after("get", func() { close(answered); <-unblock }))
	aDone := make(chan *profile, 1)
	go func() { aDone <- e.get("p:1") }()
	<-answered
	// p:1 is written, and the process stalls for 225 ms.
	e.put("p:1", sample(1, "v2"))
	e.clock.Advance(225 * time.Millisecond)
	// Reader B begins after the write.
	bDone := make(chan *profile, 1)
	go func() { bDone <- e.get("p:1") }()
	waitFor(t, "reader B to join A's read, or to read on its own", func() bool {
		if len(bDone) > 0 {
			return true
		}
		f, ok := e.c.e.InFlight("p:1")
		return ok && f.Waiters >= 2
	})
	close(unblock)
	if v := <-aDone; v.Name != "v1" {
		t.Errorf("reader A, begun before the write, read %q", v.Name)
	}
	if v := <-bDone; v.Name != "v2" {
		t.Fatalf("reader B, begun 225 ms after the write was acknowledged, read %q, want v2", v.Name)
	}
}

// stale_reads=off: a hot read whose copy a write overtook fails as a cold
// read does once the breaker is open, without asking the node believed
// down. Before, it asked it anyway and waited for it, up to
// breaker.SlowFor, as a read that may serve a stale copy does.
func TestWithoutStaleReadsAnOvertakenCopyFailsFast(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), WithStaleReads(false), WithAutoPipeline(false))
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	e.put("p:1", sample(1, "v2"))
	n := e.c.e.Copies().Nodes.Of("p:1")
	waitFor(t, "the copy overtaken by the write", func() bool {
		cp, ok := e.c.e.Copies().Local.Get("p:1")
		return ok && cp.Meta.Overtaken(n, e.clock.Now())
	})
	srv.Kill()
	waitFor(t, "the breaker open", func() bool {
		e.c.Get(e.ctx, "p:3") // a cold read's failure opens it
		return n.Unreachable()
	})
	var asked atomic.Bool
	e.c.e.Client().AddHook(before("get", func() { asked.Store(true) }))
	if _, err := e.c.Get(e.ctx, "p:1"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("stale_reads=off, an overtaken copy, Redis killed: Get = %v, want ErrUnavailable", err)
	}
	if asked.Load() {
		t.Error("stale_reads=off: the read of an overtaken copy asked the node its breaker found down")
	}
}

// bound is the invalidation bound, and busy how long after its last
// answered PING a session still vouches: an answer that comes 5 ms after
// the next PING's (track.VouchEvery, 40 ms) keeps the copies served.
const (
	bound = 50 * time.Millisecond
	busy  = 45 * time.Millisecond
)

// cutDialer dials connections it can break all at once, as a restart of
// a proxy or a kernel dropping them would: each later use fails with a
// reset, while the server and new connections are fine. go-redis cannot
// see the cut before it uses a connection, as it would a closed socket.
type cutDialer struct {
	mu    sync.Mutex
	conns []*cutConn
}

type cutConn struct {
	net.Conn
	cut atomic.Bool
}

var errReset = &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}

func (c *cutConn) Read(b []byte) (int, error) {
	if c.cut.Load() {
		return 0, errReset
	}
	return c.Conn.Read(b)
}

func (c *cutConn) Write(b []byte) (int, error) {
	if c.cut.Load() {
		return 0, errReset
	}
	return c.Conn.Write(b)
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	cn, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &cutConn{Conn: cn}
	d.mu.Lock()
	d.conns = append(d.conns, c)
	d.mu.Unlock()
	return c, nil
}

// cutAll breaks every connection dialled so far.
func (d *cutDialer) cutAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.cut.Store(true)
	}
}

// Connections broken under reads are not an outage. Stale-while-error
// answered a read that failed on a broken connection with the copy that
// another program's write had replaced, and the failure of connections,
// not of Redis, opened the breaker, which served the old copy to the
// reads after it too.
func TestBrokenConnectionsAreNotAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	d := &cutDialer{}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Dialer: d.dial, MaxRetries: -1}) // the read's failure reaches the runtime
	t.Cleanup(func() { rdb.Close() })
	invalidated := make(chan struct{}, 16)
	heard := func(c *Config) { c.Test.OnInvalidate = func([]string) { invalidated <- struct{}{} } }
	clk := fakeclock.New(epoch)
	c, err := New(rdb, profileGlue, WithEntity("profile"), withClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateTracking), heard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, clock: clk, raw: srv.Client(t), ctx: t.Context()}
	liveSessions(t, c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	for len(invalidated) > 0 {
		<-invalidated
	}

	// Who meets a broken connection first is a race: a reload of the
	// unverified copy may take it, and the reads then dial fresh ones. So
	// each try is judged alone, and tries go on until reads met the cut
	// twice: the first time, the probe's connection is made by the verdict
	// on the broken ones; the second, it is broken too.
	cutUnder := 0
	for try := 0; cutUnder < 2; try++ {
		if try == 20 {
			t.Fatalf("in %d tries reads met a broken connection %d times: the test no longer breaks connections under reads", try, cutUnder)
		}
		name := fmt.Sprintf("v%d", try+2)
		e.put("p:1", sample(1, name)) // another program's write...
		select {                      // ...heard: the copy is unverified, not yet replaced
		case <-invalidated:
		case <-time.After(settle):
			t.Fatalf("no invalidation within %v of a write", settle)
		}
		resets := c.Stats().InvalidationResets
		d.cutAll() // the runtime's connections, the session's and the probe's
		failures := 0
		for i := range 20 {
			v, err := c.Get(e.ctx, "p:1")
			if err != nil {
				failures++
				continue
			}
			if v.Name != name {
				t.Fatalf("try %d, read %d after the connections broke: %q, want %q or an error", try, i, v.Name, name)
			}
		}
		if failures > 0 {
			cutUnder++
		}
		e.wants("p:1", name, "once the connections are back")
		// A new session: the next write is announced on it, not lost
		// with the old one before it noticed the cut.
		waitFor(t, "a new session", func() bool {
			st := c.Stats()
			return st.InvalidationResets > resets && st.InvalidationLive == 1
		})
		e.heat("p:1")
		for len(invalidated) > 0 {
			<-invalidated
		}
	}
	if _, err := c.Get(e.ctx, "p:2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cold read = %v, want ErrNotFound: the breaker must not have opened", err)
	}
	if st := c.Stats(); st.StaleReads != 0 {
		t.Fatalf("StaleReads = %d, want 0: Redis never stopped answering", st.StaleReads)
	}
}

// Finding 7: any error while setting up tracking (here an ACL that denies
// CLIENT) switched to Pub/Sub for good, which never sees other writers.
// Only a server that does not know the command falls back.
func TestTrackingRefusedForAWhileIsRetried(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">pw", "~*", "&*", "+@all", "-client").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "app", Password: "pw"})
	t.Cleanup(func() { rdb.Close() })
	var log syncBuffer
	c, err := New(rdb, profileGlue, WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithHotQPS(100), WithWarmQPS(10), withClock(fakeclock.New(epoch)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, raw: admin, ctx: ctx}
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1") // the first copy asks for a session, refused
	waitFor(t, "the session's refusal", func() bool { return len(log.linesWith("invalidation connection lost")) == 1 })
	e.put("p:1", sample(1, "v2"))
	e.wants("p:1", "v2", "while tracking is refused") // nothing vouches for the copy

	if err := admin.Do(ctx, "ACL", "SETUSER", "app", "+client").Err(); err != nil {
		t.Fatal(err)
	}
	liveSessions(t, c, 1)
	e.heat("p:1")
	e.put("p:1", sample(1, "v3")) // another program's write: only tracking sees it
	e.eventually("p:1", "v3", "a write by another program once tracking is on")
	if lines := log.linesWith("Pub/Sub"); len(lines) > 0 {
		t.Fatalf("fell back to Pub/Sub: %v", lines)
	}
	if lines := log.linesWith("invalidation connection lost"); len(lines) != 1 {
		t.Fatalf("the refusal was logged %d times, want once: %v", len(lines), log.String())
	}
}

// TestAnOwnWriteRacedByAnotherIsNotServedAsVerified: another client's
// write lands after this instance's Set was answered and before Set
// applied it to the local copy (its invalidation handled meanwhile). Set
// keeps its value, but unverified: Redis holds the other write, and
// every read returns it.
func TestAnOwnWriteRacedByAnotherIsNotServedAsVerified(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking))
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	seen := e.c.Stats().Invalidations
	e.c.e.Client().AddHook(after("set", func() {
		// Ours first: Redis forgets the key as it sends its invalidation,
		// and tracks it again once the session asks; theirs, after that,
		// is heard too.
		waitFor(t, "the invalidation of our write, and p:1 tracked again", func() bool {
			return e.c.Stats().Invalidations >= seen+1 && trackedNow(e.c, "p:1")
		})
		e.put("p:1", sample(1, "theirs"))
		waitFor(t, "the invalidation of their write", func() bool { return e.c.Stats().Invalidations >= seen+2 })
	}))
	if err := e.c.Set(e.ctx, "p:1", sample(1, "mine")); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		e.wants("p:1", "theirs", "after our write was overtaken by theirs")
	}
}

// trackedNow reports whether c's session tracks hot key now: it
// confirmed it since the key's last invalidation.
func trackedNow[V any](c *Cache[string, V], key string) bool {
	e := c.e.Detector().Lookup(key)
	if e == nil {
		return false
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	state, gen := e.Confirmed()
	return state != 0 && gen == c.e.Copies().Gens.Of(key).Load()
}

// TestARefreshRacedByAWriteIsNotServedAsVerified: a refresh reads the
// same bytes as the copy holds, and a write lands before it applies them
// (its invalidation handled meanwhile). The refresh does not vouch for the
// copy: every read returns the write.
func TestARefreshRacedByAWriteIsNotServedAsVerified(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking))
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	e.c.e.Refresh() // the copy now knows its bytes: the next refresh may reverify it
	seen := e.c.Stats().Invalidations
	e.c.e.Client().AddHook(after("mget", func() {
		e.put("p:1", sample(1, "v2"))
		waitFor(t, "the invalidation of the write", func() bool { return e.c.Stats().Invalidations > seen })
	}))
	e.c.e.Refresh()
	for range 10 {
		e.wants("p:1", "v2", "after a refresh raced by a write")
	}
}

// after returns a hook that runs then once, the first time a command
// named name (alone or in a pipeline) has been answered, before its
// caller sees the answer: another writer's write landing between a reply
// and its use.
func after(name string, then func()) *afterHook {
	h := &afterHook{name: name, then: then}
	h.armed.Store(true)
	return h
}

// before is after, run as the command is about to be sent instead: a
// read that asked Redis, whatever became of its answer.
func before(name string, then func()) *afterHook {
	h := after(name, then)
	h.early = true
	return h
}

type afterHook struct {
	name  string
	then  func()
	armed atomic.Bool
	early bool // before's: then runs before the command is sent
}

func (h *afterHook) fire(cmds ...redis.Cmder) {
	for _, cmd := range cmds {
		if cmd.Name() == h.name && h.armed.CompareAndSwap(true, false) {
			h.then()
		}
	}
}

func (h *afterHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *afterHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.early {
			h.fire(cmd)
		}
		err := next(ctx, cmd)
		if !h.early {
			h.fire(cmd)
		}
		return err
	}
}

func (h *afterHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.early {
			h.fire(cmds...)
		}
		err := next(ctx, cmds)
		if !h.early {
			h.fire(cmds...)
		}
		return err
	}
}

// An entity without a TTL keeps this instance's own write of a hot key in
// memory: the reads after it are local hits, not reads of Redis.
func TestAnOwnWriteWithoutATTLIsServedFromMemory(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	if err := e.c.Set(e.ctx, "p:1", sample(1, "v2")); err != nil {
		t.Fatal(err)
	}
	hits := e.c.Stats().Hits
	e.wants("p:1", "v2", "after our write")
	e.wants("p:1", "v2", "after our write")
	if got := e.c.Stats().Hits; got != hits+2 {
		t.Fatalf("Hits went from %d to %d over two reads of our own write: not served from memory", hits, got)
	}
}

// A hot key deleted here and written again by another program is read
// back by the next refresh, which finds a key with no copy to compare.
func TestARefreshFindsAKeyWrittenAfterItsCopyWasDropped(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	if err := e.c.Del(e.ctx, "p:1"); err != nil {
		t.Fatal(err)
	}
	e.put("p:1", sample(1, "v3")) // another program's write
	e.c.e.Refresh()
	e.wants("p:1", "v3", "after the refresh")
}

// A hot key whose refreshes fail refresh_failures times in a row is
// dropped, and not one refresh sooner: until then its copy is served
// while Redis is down, after that a read fails.
func TestACopyIsDroppedAfterRefreshFailuresReloadsFailed(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithRefreshFailures(3))
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	srv.Kill()
	for i := range 3 {
		e.wants("p:1", "v1", fmt.Sprintf("after %d failed refreshes", i))
		e.c.e.Refresh()
	}
	if v, err := e.c.Get(e.ctx, "p:1"); err == nil {
		t.Fatalf("after 3 failed refreshes the copy is still served: %+v", v)
	}
}

// A refresh that finds a hot copy's bytes as the last one read them
// confirms the copy as it is, without decoding them again (reverify);
// bytes that changed are decoded. Every hot key is reloaded every refresh
// period: decoding each value again would cost a decode per key per
// period for nothing.
func TestARefreshOfUnchangedBytesDoesNotDecodeThemAgain(t *testing.T) {
	srv := redistest.Start(t)
	var decodes atomic.Int32
	g := profileGlue
	g.Decode = func(v *profile, b []byte) error {
		decodes.Add(1)
		return wire.Unmarshal(b, v)
	}
	c, err := New(srv.Client(t), g, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateOff))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, raw: srv.Client(t), ctx: t.Context()}
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	c.e.Refresh() // the first learns the bytes' hash: a read does not hash them

	before := decodes.Load()
	c.e.Refresh()
	if n := decodes.Load() - before; n != 0 {
		t.Fatalf("a refresh of unchanged bytes decoded them %d times, want 0", n)
	}
	if !servesLocally(c.e, "p:1") {
		t.Fatal("after a refresh of unchanged bytes, p:1 is not served from memory")
	}
	e.put("p:1", sample(1, "v2"))
	c.e.Refresh()
	if n := decodes.Load() - before; n != 1 {
		t.Fatalf("a refresh of changed bytes decoded them %d times, want 1", n)
	}
	e.wants("p:1", "v2", "after a refresh of changed bytes")
}

// TestADemotedKeyStoresNoReadInFlight: a read or a write of a hot key
// begun before the key was demoted stores nothing when it returns, so no
// copy is left behind that nothing refreshes or invalidates: the next
// read of the key reads Redis and gets the value another writer wrote.
func TestADemotedKeyStoresNoReadInFlight(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	entry := e.c.e.Detector().Lookup("p:1")
	t0 := e.c.e.Copies().Begin("p:1") // a read sent now, answered after the demotion
	// The entry stays in the hot set here, as it does for a read or a
	// write that looked it up just before the demotion.
	e.c.e.Copies().Demote(entry)
	if e.c.e.Copies().Keep(entry, t0, sample(1, "ada"), 0, 0, 0) {
		t.Fatal("a read begun before the demotion stored its value after it")
	}
	if err := e.c.Set(e.ctx, "p:1", sample(1, "bob")); err != nil {
		t.Fatal(err)
	}
	if holds(e.c.e, "p:1") {
		t.Fatal("a write after the demotion left a copy")
	}
	e.put("p:1", sample(1, "carl")) // by another writer, unseen with invalidation off
	if got := e.get("p:1"); got.Name != "carl" {
		t.Fatalf("read %q after the demotion, want Redis's carl", got.Name)
	}
}
