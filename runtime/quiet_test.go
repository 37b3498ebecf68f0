package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
	"github.com/hotkeygen/hotkeygen/internal/redistest/proxy"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// These tests attack the availability promise with the failures that do
// not announce themselves (issue 21): a Redis that hangs, and one that
// leaves politely. Each checks what a read returns.

// patience is how long a test lets reads run against a frozen Redis
// before it calls them blocked: far beyond what any read should take
// once the breaker is open, far below the client's ReadTimeout (a
// minute, so a read that waits for it shows). It is a watchdog, not a
// measure: the soak measures how long reads take.
const patience = 30 * time.Second

// Finding 1: with redis-server stopped by SIGSTOP, every read, hot keys
// included, waited for the client's ReadTimeout: the breaker opened only
// on a refused or broken connection, and a frozen server refuses
// nothing. Now a node that leaves a PING unanswered for AnswerWithin is
// down: hot reads are served from memory while it is frozen, a cold read
// that waits on it has the breaker asked, so the reads after it fail
// fast, and once it thaws another program's write is read. The client
// has one connection, which a read sent before the breaker opened keeps
// until the thaw (go-redis does not interrupt a read when its context
// ends), and a ReadTimeout of a minute: a read that waits for it shows.
func TestReadsDoNotWaitOnAFrozenRedis(t *testing.T) {
	for _, tc := range []struct{ mode, read string }{
		{InvalidateTracking, "Get"}, {InvalidatePubSub, "Get"}, {InvalidateOff, "Get"},
		{InvalidateTracking, "GetMany"}, {InvalidateOff, "GetMany"},
	} {
		mode := tc.mode
		t.Run(mode+"/"+tc.read, func(t *testing.T) {
			srv := redistest.Start(t)
			w := &writeWatch{sent: make(chan struct{}), what: []byte("p:2")}
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Dialer: w.dial, PoolSize: 1, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
			t.Cleanup(func() { rdb.Close() })
			e := newEnvClient(t, srv, rdb, WithInvalidate(mode), WithClock(wallClock{}))
			if mode != InvalidateOff {
				waitFor(t, "the session", func() bool { return e.c.Stats().InvalidationLive == 1 })
			}
			e.put("p:1", sample(1, "v1"))
			e.heat("p:1")

			srv.Hang(t)
			done := make(chan error, 1)
			go func() { done <- readThroughAHang(e, tc.read, w.sent) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(patience):
				t.Fatalf("reads of a frozen Redis still blocked after %v", patience)
			}
			if st := e.c.Stats(); mode != InvalidateOff && st.StaleReads == 0 {
				t.Errorf("StaleReads = 0; the hot reads of a frozen Redis are stale reads")
			}

			srv.Thaw()
			write := func() error { e.put("p:1", sample(1, "v2")); return nil }
			if mode == InvalidatePubSub { // only repositories announce writes
				write = func() error { return e.c.Set(e.ctx, "p:1", sample(1, "v2")) }
			}
			waitFor(t, "a write after the thaw", func() bool { return write() == nil })
			if mode == InvalidateOff {
				e.c.refresh()
			}
			e.eventually("p:1", "v2", "after the thaw")
		})
	}
}

// Finding 2: a hot key was said to go unserved after SHUTDOWN NOSAVE
// while SIGKILL and SIGTERM served it. However Redis leaves (killed,
// shut down by a signal or a command, frozen) a hot key is served from
// its copy, as a stale read; with stale_reads=off it fails like a cold
// read instead, and never returns the copy nobody vouches for.
func TestHotKeysOutliveRedisLeaving(t *testing.T) {
	leave := map[string]func(t *testing.T, srv *redistest.Server, admin *redis.Client){
		"SIGKILL": func(t *testing.T, srv *redistest.Server, _ *redis.Client) { srv.Kill() },
		"SIGTERM": func(t *testing.T, srv *redistest.Server, _ *redis.Client) {
			if err := srv.Terminate(); err != nil {
				t.Fatal(err)
			}
		},
		"SHUTDOWN NOSAVE": func(t *testing.T, srv *redistest.Server, admin *redis.Client) {
			admin.Do(t.Context(), "SHUTDOWN", "NOSAVE") // answered by the connection closing
			srv.WaitExit(10 * time.Second)
		},
		"SIGSTOP": func(t *testing.T, srv *redistest.Server, _ *redis.Client) { srv.Hang(t) },
	}
	for _, how := range []string{"SIGKILL", "SIGTERM", "SHUTDOWN NOSAVE", "SIGSTOP"} {
		for _, staleReads := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stale_reads=%v", how, staleReads), func(t *testing.T) {
				srv := redistest.Start(t)
				e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), WithClock(wallClock{}), WithStaleReads(staleReads))
				waitFor(t, "the session", func() bool { return e.c.Stats().InvalidationLive == 1 })
				e.put("p:1", sample(1, "v1"))
				e.heat("p:1")
				admin := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
				t.Cleanup(func() { admin.Close() })
				admin.Ping(t.Context())

				leave[how](t, srv, admin)
				failed := 0
				for i := range 50 {
					v, err := e.c.Get(e.ctx, "p:1")
					switch {
					case staleReads && (err != nil || v.Name != "v1"):
						t.Fatalf("hot read %d after %s: %+v, %v; want its copy", i, how, v, err)
					case err != nil && !errors.Is(err, ErrUnavailable):
						t.Fatalf("hot read %d after %s with stale_reads=off: %v; want ErrUnavailable", i, how, err)
					case err != nil:
						failed++
					}
					time.Sleep(time.Millisecond)
				}
				// With stale_reads=off, a copy is served only while its
				// session still vouched for it, and none as a stale read.
				if st := e.c.Stats(); staleReads != (st.StaleReads > 0) || !staleReads && failed == 0 {
					t.Fatalf("stale_reads=%v: %d stale reads, %d reads failed", staleReads, st.StaleReads, failed)
				}
			})
		}
	}
}

// A copy that a write Redis took has made old (overtaken: the write was
// heard, and the node answered after) is never served, and while the node
// answers, however slowly, its read asks Redis whatever the breaker says.
// In the soak, right after CLIENT PAUSE ended, the writes queued during it
// were heard before the breaker closed, and reads of those keys failed
// fast (up to 7.4% of a pause's hot reads) while Redis answered. A copy
// whose write was heard with no answer since, or whose node has been
// silent for SlowFor, is served as before: an outage right after a write
// still finds the key in memory. The invalidation is handed to the Cache
// as a session hands it, with invalidation off so that no session closes
// the breaker meanwhile.
func TestAnOvertakenCopyIsReadFromRedisWhileTheBreakerIsOpen(t *testing.T) {
	for _, tc := range []struct {
		name      string
		heardDown bool          // the write is heard after the breaker opened
		answer    bool          // the node answers, late, after the write is heard
		silentFor time.Duration // then says nothing for this long
		uncertain bool          // no write is heard: the copy is unverified by a write that may have failed
		want      string
	}{
		{name: "heard while down, then an answer", heardDown: true, answer: true, want: "v2"},
		{name: "heard while up, then an answer", answer: true, want: "v2"},
		{name: "heard while up, no answer since", want: "v1"},
		{name: "heard while up, an answer, then silent", answer: true, silentFor: breaker.SlowFor, want: "v1"},
		{name: "no write heard, an answer", uncertain: true, answer: true, want: "v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slowProbe := func(c *Config) { c.probeEvery = time.Hour }
			e := newEnv(t, slowProbe)
			e.put("p:1", sample(1, "v1"))
			e.heat("p:1")
			e.put("p:1", sample(1, "v2")) // another program's write

			n := e.c.copies.nodes.One
			n.Answered(e.clock.Now()) // the node answered before the write
			slow := errors.New("test: the node was slow")
			switch {
			case tc.uncertain:
				e.c.copies.uncertain("p:1", "p:1")
			case !tc.heardDown:
				e.c.copies.invalidate([]string{"p:1"})
			}
			n.Judge(slow, e.clock.Now())
			if tc.heardDown && !tc.uncertain {
				e.c.copies.invalidate([]string{"p:1"})
			}
			if tc.answer {
				n.Answered(e.clock.Now()) // a late answer: the node is slow, not silent
			}
			if tc.silentFor > 0 {
				e.clock.Advance(tc.silentFor)
				n.Judge(slow, e.clock.Now()) // the breaker's evidence, renewed
			}
			e.wants("p:1", tc.want, "the breaker open")
			if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("a cold read with the breaker open: %v, want ErrUnavailable", err)
			}
		})
	}
}

// Found by the 10-minute soak: with invalidation off, a Redis answering
// 300 ms late left copies 1.2 s behind another program's acknowledged
// writes (the soak's "latency 100-300ms" phase). The breaker's pings,
// which give a node AnswerWithin, failed and opened it; the refresh, the
// only thing that tells copies of writes, gave up on the open breaker,
// and the copies it left unverified were served as stale reads until
// RefreshFailures refreshes had failed. A refresh now waits for a slow
// node, through a new connection too (the client's first batch here): its
// copies are replaced. A node that does not answer at all (cut off) has
// them served, stale, as before.
func TestARefreshWaitsForASlowNode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(p *proxy.Proxy) error // after the copy was made
		want  string
	}{
		{"slow: the copy is refreshed", func(p *proxy.Proxy) error { return p.Slow(2*breaker.AnswerWithin, 0) }, "v2"},
		{"silent: the copy is served", (*proxy.Proxy).Cut, "v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			p, err := proxy.New(srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
			t.Cleanup(func() { rdb.Close() })
			slowProbe := func(c *Config) { c.probeEvery = time.Hour }
			e := newEnvClient(t, srv, rdb, WithRefresh(time.Second), slowProbe)
			e.put("p:1", sample(1, "v1"))
			e.heat("p:1")

			if err := tc.fault(p); err != nil {
				t.Fatal(err)
			}
			if !e.c.copies.nodes.One.Check() {
				t.Fatal("the node is not found down by a ping")
			}
			e.put("p:1", sample(1, "v2")) // another program's write, acknowledged
			e.tick(time.Second)
			e.wants("p:1", tc.want, "after a refresh")
		})
	}
}

// readThroughAHang reads a hot key 200 times (with Get or GetMany) while
// Redis is frozen, each
// read returning its copy; then, once a cold read's GET was sent (sent is
// closed) or refused, reads another cold key until one fails fast.
func readThroughAHang(e *env, read string, sent <-chan struct{}) error {
	get := func() (*profile, error) { return e.c.Get(e.ctx, "p:1") }
	if read == "GetMany" {
		get = func() (*profile, error) {
			vs, err := e.c.GetMany(e.ctx, []string{"p:1"})
			if err != nil {
				return nil, err
			}
			return vs[0], nil
		}
	}
	for i := range 200 {
		v, err := get()
		if err != nil || v == nil || v.Name != "v1" {
			return fmt.Errorf("hot read %d of a frozen Redis: %+v, %v", i, v, err)
		}
		time.Sleep(time.Millisecond)
	}
	refused := make(chan struct{})
	go func() {
		e.c.Get(e.ctx, "p:2") // refused at once, or it waits for the thaw
		close(refused)
	}()
	select {
	case <-sent:
	case <-refused:
	}
	for {
		_, err := e.c.Get(e.ctx, "p:3")
		if errors.Is(err, ErrUnavailable) {
			return nil
		}
		if err == nil {
			return errors.New("a cold read of a frozen Redis succeeded")
		}
	}
}

// writeWatch dials plain connections that close sent the first time one
// writes a command holding what.
type writeWatch struct {
	what []byte
	sent chan struct{}
	once sync.Once
}

func (w *writeWatch) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	cn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return watchedConn{cn, w}, nil
}

type watchedConn struct {
	net.Conn
	w *writeWatch
}

func (c watchedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if bytes.Contains(b, c.w.what) {
		c.w.once.Do(func() { close(c.w.sent) })
	}
	return n, err
}

// An open breaker is believed for StaleLease after the failure that
// opened it, and not a nanosecond longer: then a read of a copy nobody
// vouches for asks Redis, which answers, and returns what Redis holds.
func TestAnOpenBreakerIsBelievedForStaleLease(t *testing.T) {
	slowProbe := func(c *Config) { c.probeEvery = time.Hour }
	e := newEnv(t, slowProbe)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	e.put("p:1", sample(1, "v2"))      // another program's write
	e.c.copies.uncertain("p:1", "p:1") // the copy is vouched for no more
	e.c.copies.nodes.One.Judge(errors.New("test: refused"), e.clock.Now())
	e.clock.Advance(breaker.StaleLease - 1)
	e.wants("p:1", "v1", "within StaleLease of the failure")
	e.clock.Advance(1)
	e.wants("p:1", "v2", "StaleLease after the failure, Redis answering")
}

// A ping that failed at once dates the breaker's evidence when it
// failed, not at its deadline: StaleLease after a refused connection, a
// restarted Redis is asked, and its value read.
func TestAFailedPingDatesItsEvidenceWhenItFailed(t *testing.T) {
	srv := redistest.Start(t)
	slowProbe := func(c *Config) { c.probeEvery = time.Hour }
	e := newEnvOn(t, srv, slowProbe)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	srv.Kill()
	if _, err := e.c.Get(e.ctx, "p:2"); err == nil { // refused: the breaker opens
		t.Fatal("a cold read of a dead Redis succeeded")
	}
	if e.c.Stats().RedisDownSince.IsZero() {
		t.Fatal("the breaker did not open")
	}
	srv.Restart(t)
	e.put("p:1", sample(1, "v2"))
	e.c.copies.uncertain("p:1", "p:1")
	e.clock.Advance(breaker.StaleLease)
	e.wants("p:1", "v2", "StaleLease after a refused ping, Redis back")
}

// A ping whose failure is seen past its deadline (its goroutine held up,
// here a clock that moved on while it ran) dates the failure at the
// deadline, the last moment the evidence held, not when the goroutine got
// back to it: the breaker is believed for StaleLease from then, and a read
// after that asks Redis again. Dated late, a starved probe would have
// copies served as stale reads longer after Redis answered again.
func TestAPingHeldUpPastItsDeadlineDatesItsFailureAtTheDeadline(t *testing.T) {
	srv := redistest.Start(t)
	slowProbe := func(c *Config) { c.probeEvery = time.Hour }
	e := newEnvOn(t, srv, slowProbe)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	stop := answerPings(e.c, func(context.Context) error {
		e.clock.Advance(time.Second)
		return &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	})
	if !e.c.copies.nodes.One.Check() {
		t.Fatal("a failed ping left the breaker closed")
	}
	stop()
	e.put("p:1", sample(1, "v2"))
	e.c.copies.uncertain("p:1", "p:1")
	e.wants("p:1", "v2", "a second after a ping sent to a Redis that answers again")
}

// answerPings has the breaker's pings of c's single server answered by
// ping instead of by Redis, until the function it returns is called: a
// hook on the probe's client, which the breaker pings through.
func answerPings[K comparable, V any](c *Cache[K, V], ping func(context.Context) error) (stop func()) {
	h := &pingHook{}
	h.ping.Store(&ping)
	c.hub.Probe().AddHook(h)
	return func() { h.ping.Store(nil) }
}

// pingHook answers PING with ping, while it is set.
type pingHook struct {
	ping atomic.Pointer[func(context.Context) error]
}

func (h *pingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if p := h.ping.Load(); p != nil && cmd.Name() == "ping" {
			err := (*p)(ctx)
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *pingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
