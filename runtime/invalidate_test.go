package runtime

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

func TestTrackingInvalidatesEveryInstance(t *testing.T) {
	srv := redistest.Start(t)
	es := instances(t, srv, 3, InvalidateTracking)
	// Every server of the matrix (make matrix runs this on each) takes
	// tracking on a RESP3 connection: none falls back to Pub/Sub.
	if got := es[0].c.Stats().Invalidation; got != InvalidateTracking {
		t.Fatalf("on %s the invalidation in effect is %q, want %q", redistest.ServerName(), got, InvalidateTracking)
	}

	// A write through one repository reaches the others' copies.
	if err := es[0].c.Set(es[0].ctx, "p:1", sample(1, "v2")); err != nil {
		t.Fatal(err)
	}
	for _, e := range es[1:] {
		dropped(t, e, "p:1")
		if got := e.get("p:1"); got.Name != "v2" {
			t.Fatalf("after the write got %q", got.Name)
		}
	}

	// So does a write by another program: redis-cli.
	for _, e := range es {
		e.heat("p:1")
	}
	b, _ := msgpack.Marshal(sample(1, "from redis-cli"))
	host, port, _ := net.SplitHostPort(srv.Addr)
	cli := exec.Command("redis-cli", "-h", host, "-p", port, "-x", "SET", "p:1") // -x: the value from stdin
	cli.Stdin = bytes.NewReader(b)
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli: %v: %s", err, out)
	}
	for _, e := range es {
		dropped(t, e, "p:1")
		if got := e.get("p:1"); got.Name != "from redis-cli" {
			t.Fatalf("after redis-cli SET got %q", got.Name)
		}
	}
	if st := es[1].c.Stats(); st.Invalidations < 2 {
		t.Fatalf("Invalidations = %d, want at least 2", st.Invalidations)
	}
}

// A session tracks the keys of the copies kept, and nothing else: writes
// of keys outside the entity's prefix, and of its keys no copy holds,
// send it nothing, and the first invalidation it handles names the held
// key written last.
func TestOnlyTheKeysOfKeptCopiesAreTracked(t *testing.T) {
	srv := redistest.Start(t)
	seen := make(chan []string, 100)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), func(c *Config) { c.Test.OnInvalidate = func(keys []string) { seen <- keys } })
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	for _, key := range []string{"other:1", "q:1", "p:2", "p:1"} { // p:1 last: its invalidation comes after any of the others'
		if err := e.raw.Set(e.ctx, key, "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case keys := <-seen:
		if !slices.Equal(keys, []string{"p:1"}) {
			t.Fatalf("the first invalidation named %q; want only p:1, the one key a copy holds", keys)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no invalidation of p:1 within 10s")
	}
}

// TestPubSubInvalidatesOtherInstances: with invalidate=pubsub and
// pubsub-keys, a write or a delete through one repository reaches the
// other's hot copy, which then reads what Redis holds; and during a
// rolling deploy from one to the other, between builds of either.
func TestPubSubInvalidatesOtherInstances(t *testing.T) {
	srv := redistest.Start(t)
	for _, modes := range [][2]string{
		{InvalidatePubSub, InvalidatePubSub},
		{InvalidatePubSubKeys, InvalidatePubSubKeys},
		{InvalidatePubSub, InvalidatePubSubKeys},
		{InvalidatePubSubKeys, InvalidatePubSub},
	} {
		t.Run(modes[0]+" writes, "+modes[1]+" holds", func(t *testing.T) {
			es := []*env{newEnvOn(t, srv, WithInvalidate(modes[0])), newEnvOn(t, srv, WithInvalidate(modes[1]))}
			es[0].put("p:1", sample(1, "v1"))
			for _, e := range es {
				e.heat("p:1")
			}
			liveSessions(t, es[1].c, 1)
			es[1].heat("p:1")
			if err := es[0].c.Set(es[0].ctx, "p:1", sample(1, "v2")); err != nil {
				t.Fatal(err)
			}
			es[1].eventually("p:1", "v2", "after another instance's Set")
			es[1].heat("p:1")
			if err := es[0].c.Del(es[0].ctx, "p:1"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the other instance to read p:1 as deleted", func() bool {
				_, err := es[1].c.Get(es[1].ctx, "p:1")
				return errors.Is(err, ErrNotFound)
			})
		})
	}
}

// A Pub/Sub session whose connection was lost ends, even though go-redis
// resubscribes by itself inside its receive: announcements published
// while it was gone were missed, so its node's copies must be unverified
// and the next session starts from Redis again. The second subscription
// confirmation is how the session knows.
func TestAPubSubSessionThatResubscribedEnds(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidatePubSub))
	liveSessions(t, e.c, 1)
	if err := e.raw.ClientKillByFilter(e.ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the session to end and another to start", func() bool {
		st := e.c.Stats()
		return st.InvalidationResets >= 1 && st.InvalidationLive == 1
	})
}

// On a cluster, a write through one repository reaches the copies of
// another, with tracking and with key channels, whatever master the key is
// on.
func TestInvalidationOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	for _, mode := range []string{InvalidateTracking, InvalidatePubSubKeys} {
		t.Run(mode, func(t *testing.T) {
			newCache := func() *Cache[string, profile] {
				c, err := New(cl.Client(t), profileGlue, WithInvalidate(mode), withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				liveSessions(t, c, 3)
				return c
			}
			a, b := newCache(), newCache()
			ctx := t.Context()
			keys := []string{"p:1", "p:2", "p:3", "p:4", "p:5", "p:6"} // spread over the masters
			for _, k := range keys {
				if err := a.Set(ctx, k, sample(1, "v1")); err != nil {
					t.Fatal(err)
				}
				for range 101 {
					b.Get(ctx, k)
				}
				if !holds(b.e, k) {
					t.Fatalf("%s not held by b", k)
				}
				waitFor(t, k+" served from b's memory", func() bool {
					b.Get(ctx, k) // kept verified once its node confirms it listens for k
					return servesLocally(b.e, k)
				})
			}
			for _, k := range keys {
				if err := a.Set(ctx, k, sample(1, "v2")); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range keys {
				waitFor(t, "b to invalidate "+k, func() bool { return !servesLocally(b.e, k) })
				if v, err := b.Get(ctx, k); err != nil || v.Name != "v2" {
					t.Fatalf("b reads %s as %+v, %v", k, v, err)
				}
			}

		})
	}
}

// A server without client tracking (here: CLIENT renamed away, as some
// managed offerings do) makes tracking fall back to Pub/Sub.
func TestTrackingFallsBackToPubSub(t *testing.T) {
	srv, err := redistest.Launch("--rename-command", "CLIENT", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	es := instances(t, srv, 2, InvalidateTracking)
	if err := es[0].c.Set(es[0].ctx, "p:1", sample(1, "v2")); err != nil {
		t.Fatal(err)
	}
	dropped(t, es[1], "p:1")
	if got := es[1].get("p:1"); got.Name != "v2" {
		t.Fatalf("got %q", got.Name)
	}
	for i, e := range es {
		if got := e.c.Stats().Invalidation; got != InvalidatePubSub {
			t.Errorf("instance %d: Stats().Invalidation = %q, want %q: the mode in effect", i, got, InvalidatePubSub)
		}
	}
}

// failPublish is a hook that fails every PUBLISH, as a Redis whose ACL
// forbids it, or a proxy that drops it, would.
type failPublish struct{}

func (failPublish) DialHook(next redis.DialHook) redis.DialHook { return next }
func (failPublish) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var first error
		for _, cmd := range cmds {
			if err := (failPublish{}).refuse(cmd); err != nil && first == nil {
				first = err
			}
		}
		if first != nil {
			return first
		}
		return next(ctx, cmds)
	}
}
func (failPublish) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := (failPublish{}).refuse(cmd); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}

// refuse fails cmd when it is a PUBLISH.
func (failPublish) refuse(cmd redis.Cmder) error {
	if cmd.Name() != "publish" {
		return nil
	}
	err := errors.New("NOPERM this user has no permissions to run the 'publish' command")
	cmd.SetErr(err)
	return err
}

// A write whose announcement fails is not acknowledged: its value
// landed, but another instance holding the key would not hear of it and
// serve its older copy past the bound, so the writer is told, and told to
// write again. The ACL here lets the writer's user store and subscribe
// but not publish.
func TestAWriteWhoseAnnouncementFailsIsNotAcknowledged(t *testing.T) {
	for _, mode := range []string{InvalidatePubSub, InvalidatePubSubKeys} {
		t.Run(mode, func(t *testing.T) {
			srv := redistest.Start(t)
			admin := srv.Client(t)
			if err := admin.Do(t.Context(), "ACL", "SETUSER", "nopublish", "on", ">pw", "~*", "&*", "+@all", "-publish").Err(); err != nil {
				t.Fatal(err)
			}
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "nopublish", Password: "pw"})
			t.Cleanup(func() { rdb.Close() })
			writer := newEnvClient(t, srv, rdb, WithInvalidate(mode))
			err := writer.c.Set(writer.ctx, "p:1", sample(1, "v1"))
			if err == nil || !strings.Contains(err.Error(), "NOPERM") || !strings.Contains(err.Error(), "write it again") {
				t.Fatalf("Set whose PUBLISH was refused returned %v; want the refusal, and what to do", err)
			}
			reader := newEnvClient(t, srv, admin, WithInvalidate(mode))
			if got := reader.get("p:1"); got.Name != "v1" {
				t.Fatalf("read %q; the refused announcement's write should have landed all the same", got.Name)
			}
		})
	}
}

// A failed PUBLISH is logged the first time, then at most once a second,
// with the number of failures left unlogged: while it fails, every write
// fails to announce itself, and one line per write would drown the log.
func TestFailedAnnouncementsAreLoggedOnceASecond(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	rdb.AddHook(failPublish{})
	var logs syncBuffer
	e := newEnvClient(t, srv, rdb, WithInvalidate(InvalidatePubSub), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	write := func(n int) {
		for i := range n {
			if err := e.c.Set(e.ctx, "p:1", sample(int64(i), "v")); err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Fatalf("a write whose PUBLISH failed returned %v; want its failure", err)
			}
		}
	}
	const failed = "publishing an invalidation failed"
	write(200)
	if got := logs.linesWith(failed); len(got) != 1 || !strings.Contains(got[0], "unlogged_failures=0") {
		t.Fatalf("after 200 failed announcements within a second, logged %q; want the first alone", got)
	}
	e.clock.Advance(999 * time.Millisecond)
	write(10)
	if got := logs.linesWith(failed); len(got) != 1 {
		t.Fatalf("logged %d lines within the first second, want 1", len(got))
	}
	e.clock.Advance(time.Millisecond)
	write(10)
	if got := logs.linesWith(failed); len(got) != 2 || !strings.Contains(got[1], "unlogged_failures=209") {
		t.Fatalf("a second after the first line, logged %q; want a second line counting the 209 left out", got)
	}
	if st := e.c.Stats(); st.RedisErrors < 220 {
		t.Fatalf("RedisErrors = %d, want every failed announcement counted (220)", st.RedisErrors)
	}
}

// An invalidation connection lost is logged once per outage, however
// many reconnections fail, and its return once, not its first connection:
// an outage must be in the log, and one line per failed attempt, several
// a second, would bury it.
func TestALostInvalidationConnectionIsLoggedOncePerOutageAndItsReturnOnce(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	var logs syncBuffer
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	live := func() bool { return e.c.Stats().InvalidationLive == 1 }
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1") // a copy kept: its node keeps a session
	waitFor(t, "the session", live)
	const lost, back = "invalidation connection lost", "invalidation connection back"
	count := func(what string) int { return len(logs.linesWith(what)) }
	if count(back) != 0 || count(lost) != 0 {
		t.Fatalf("the first connection logged %q", logs.String())
	}

	// An outage: the session's connection is killed and Redis refuses the
	// next ones, as a server at maxclients does (it accepts, answers an
	// error and closes); admin's connection, made before, stays. Each
	// attempt of the session's is a few connections (go-redis retries):
	// nine refused are several attempts.
	if err := admin.ConfigSet(ctx, "maxclients", "1").Err(); err != nil {
		t.Fatal(err)
	}
	rejected := infoStat(t, admin, "stats", "rejected_connections")
	if err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "several refused reconnections", func() bool {
		return infoStat(t, admin, "stats", "rejected_connections") >= rejected+9
	})
	if n := count(lost); n != 1 {
		t.Fatalf("an outage of several failed reconnections logged the loss %d times, want once: %s", n, logs.String())
	}
	if err := admin.ConfigSet(ctx, "maxclients", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the return to be logged", func() bool { return count(back) == 1 })
	waitFor(t, "the session back", live)

	// The next loss is a new outage.
	if err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second loss to be logged", func() bool { return count(lost) == 2 })
	waitFor(t, "the second return to be logged", func() bool { return count(back) == 2 })
}

// While Redis refuses the invalidation session (here an ACL without
// CLIENT, as while an operator changes it), the session retries at once
// the first time (a killed connection on a healthy server is the common
// case), then backs off, doubling from sessionBackoff to
// sessionBackoffMax: without the pause it would retry hundreds of times a
// second against a Redis that may be struggling already.
func TestInvalidationReconnectionsBackOffWhileRedisRefuses(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "app", "on", ">pw", "~*", "&*", "+@all", "-client").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "app", Password: "pw"})
	t.Cleanup(func() { rdb.Close() })
	e := newEnvClient(t, srv, rdb, WithInvalidate(InvalidateTracking))
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1") // the first copy asks for a session
	refused := func() int { return redistest.CommandStat(t, admin, "client|tracking", "rejected_calls") }
	waitFor(t, "a first refusal", func() bool { return refused() > 0 })
	// Over a second: attempts at 0, 0, 50, 150, 350 and 750 ms, each
	// refused CLIENT TRACKING once. Hundreds without the backoff; 40
	// leaves a slow machine room.
	time.Sleep(time.Second)
	if n := refused(); n > 40 {
		t.Fatalf("Redis refused the session %d times in about a second, want at most 40: a retry at once, then backing off", n)
	}
}

// A Cache made while Redis is down, which asks Redis nothing until it
// keeps a copy, finds it down at its first read: the read's refused
// connection has the watcher dial, refused too, the breaker opens, and
// the reads after it fail fast instead of spending the client's dial
// retries.
func TestACacheMadeWhileRedisIsDownFindsItDownAtItsFirstRead(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking))
	if _, err := e.c.Get(e.ctx, "p:1"); err == nil {
		t.Fatal("a read succeeded with Redis down")
	}
	waitFor(t, "the breaker to open", func() bool { return !e.c.Stats().RedisDownSince.IsZero() })
	if _, err := e.c.Get(e.ctx, "p:1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a read while Redis is down: %v, want ErrUnavailable", err)
	}
}

// failoverClient returns a client made as go-redis's NewFailoverClient
// makes one, whose server moves under it: its Addr is "FailoverClient",
// and its dialer, standing for the Sentinel's, dials the address master
// returns. It closes when t ends.
func failoverClient(t *testing.T, opts *redis.Options, master func() *string) *redis.Client {
	t.Helper()
	opts.Addr = "FailoverClient"
	opts.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, *master())
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// A plain client's server does not move under it: its session sends
// nothing through the caller's client, and the node parses no INFO and
// no nudge of the instance's (see following).
func TestAPlainClientsSessionSendsNothingThroughTheCallersClient(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	e := newEnvClient(t, srv, rdb, WithInvalidate(InvalidateTracking))
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	liveSessions(t, e.c, 1)
	sent := new(calls)
	rdb.AddHook(sent)
	pings := redistest.CommandStat(t, e.raw, "ping", "calls")
	waitFor(t, "20 of the session's PINGs", func() bool { return redistest.CommandStat(t, e.raw, "ping", "calls") >= pings+20 })
	if sent.of("info")+sent.of("ping") != 0 {
		t.Fatalf("the caller's client sent %d INFO and %d PING, want none", sent.of("info"), sent.of("ping"))
	}
}

// calls is a hook that counts the commands a client sent, by name: on
// the caller's client, what the runtime sends through it on its own.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *calls) of(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[name]
}

func (*calls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (*calls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *calls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		if h.n == nil {
			h.n = map[string]int{}
		}
		h.n[cmd.Name()]++
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

// TestASessionWhoseClientMovedToAnotherServerEnds: a Sentinel failover
// client's commands move to the promoted replica while the session still
// listens to the old master, which hears no more writes; the session must
// end when the caller's commands reach another server, so that reads go to
// the new master, and the copies it vouched for stop being served the
// moment that is seen, not when its goroutine gets round to it (here it
// is held up handling an invalidation). A session whose client stays on
// its server lasts.
//
// Two independent servers stand for the old and the new master, and the
// caller's client's dialer for the Sentinel's, which finds the master:
// its connections to A killed, the client reaches B.
func TestASessionWhoseClientMovedToAnotherServerEnds(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ctx := t.Context()
	var master atomic.Pointer[string]
	master.Store(&a.Addr)
	rdb := failoverClient(t, &redis.Options{}, master.Load)
	old, _ := msgpack.Marshal(sample(1, "on A"))
	if err := a.Client(t).Set(ctx, "p:1", old, 0).Err(); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}, 1), make(chan struct{})
	holdOn := func(c *Config) {
		c.Test.OnInvalidate = func(keys []string) {
			if slices.Contains(keys, "p:hold") {
				select {
				case held <- struct{}{}:
				default:
				}
				<-release
			}
		}
	}
	e := newEnvClient(t, a, rdb, WithInvalidate(InvalidateTracking), holdOn)
	t.Cleanup(func() { close(release) }) // before the Cache closes
	liveSessions(t, e.c, 1)
	e.heat("p:1")
	e.put("p:hold", sample(2, "held"))
	e.heat("p:hold") // a session hears only the keys of the copies kept

	pings := redistest.CommandStat(t, e.raw, "ping", "calls")
	waitFor(t, "10 of the session's PINGs", func() bool { return redistest.CommandStat(t, e.raw, "ping", "calls") >= pings+10 })
	if st := e.c.Stats(); st.InvalidationResets != 0 || st.InvalidationLive != 1 {
		t.Fatalf("with the client still on A: %d sessions ended, %d live; want 0, 1", st.InvalidationResets, st.InvalidationLive)
	}

	// The session's goroutine is held up handling an invalidation.
	if err := e.raw.Set(ctx, "p:hold", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the invalidation of p:hold never came")
	}

	// The failover: B is the master, with a newer value, and the client's
	// connections to A are gone (the session's, a Pub/Sub one, stays).
	moved, _ := msgpack.Marshal(sample(1, "on B"))
	if err := b.Client(t).Set(ctx, "p:1", moved, 0).Err(); err != nil {
		t.Fatal(err)
	}
	master.Store(&b.Addr)
	if err := e.raw.ClientKillByFilter(ctx, "TYPE", "normal").Err(); err != nil {
		t.Fatal(err)
	}
	// A command of the caller's, its connection to A gone, dials B: the
	// session ends as that dial returns.
	rdb.Ping(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := e.c.Get(ctx, "p:1")
		if err == nil && v.Name == "on B" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after the client moved to B, p:1 reads %+v, %v; want B's value", v, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// A write of a key no instance holds costs the node the same however
// many instances hold other keys of its entity: their sessions track the
// keys of their copies, not the entity's prefix, and the server sends
// them nothing. A write of a held key sends each holder one
// invalidation. Counted at the server: with the prefix broadcast of
// before, each of the eight instances added about 38 bytes to every
// write.
func TestAWriteOfAKeyNobodyHoldsSendsTheInstancesNothing(t *testing.T) {
	srv := redistest.Start(t)
	es := instances(t, srv, 8, InvalidateTracking) // each holds p:1
	admin := srv.Client(t)
	out := func() int { return infoStat(t, admin, "stats", "total_net_output_bytes") }
	const writes = 5000
	before := out()
	pipe := admin.Pipeline()
	for i := range writes {
		pipe.Set(t.Context(), "p:2", i, 0)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Each SET is answered +OK (5 bytes); the slack is the count's own
	// INFO and the sessions' PINGs meanwhile.
	if per := float64(out()-before) / writes; per > 5+3 {
		t.Fatalf("the node sent %.1f bytes per write of a key no instance holds, want the writer's 5 (+3 slack)", per)
	}

	counts := make([]uint64, len(es))
	for i, e := range es {
		counts[i] = e.c.Stats().Invalidations
	}
	if err := admin.Set(t.Context(), "p:1", "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i, e := range es {
		dropped(t, e, "p:1")
		if got := e.c.Stats().Invalidations - counts[i]; got != 1 {
			t.Errorf("instance %d handled %d invalidations of one write of the key it holds, want 1", i, got)
		}
	}
}

// An instance that holds copies costs their node at most 25 of its
// session's PINGs a second (track.VouchEvery), however hard it reads
// them: what a fleet costs a node grows with the instances holding
// copies on it by no more than that. Counted at the server, less the
// PINGs of the breaker's watcher, which pings only while the node is in
// doubt; a slower machine sends fewer, never more.
func TestAnInstanceHoldingCopiesCostsItsNodeAtMost25PINGsASecond(t *testing.T) {
	srv := redistest.Start(t)
	watcher := new(atomic.Int64)
	counted := func(c *Config) {
		c.Test.ProbeLine = func(l breaker.Line) breaker.Line { return countingLine{l, watcher} }
	}
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), withClock(config.Wall{}), counted)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	liveSessions(t, e.c, 1)
	pings := func() int64 { return int64(redistest.CommandStat(t, e.raw, "ping", "calls")) - watcher.Load() }
	before, began := pings(), time.Now()
	for time.Since(began) < time.Second {
		e.get("p:1")
	}
	got, elapsed := pings()-before, time.Since(began)
	if most := int64(elapsed.Seconds()*25) + 2; got > most {
		t.Fatalf("the session sent %d PINGs in %v, want at most %d (25 a second)", got, elapsed, most)
	}
}

// An instance that keeps no copy costs the node nothing but its own
// commands: no session, no PING, no INFO, no tracking connection, cold
// reads or not. The first copy starts its node's session, and the session
// ends once the last copy has been gone for the linger (here 50 ms): a
// fleet's cost at a node grows with the instances that hold copies there,
// not with the instances.
func TestAnInstanceWithoutCopiesCostsItsNodeNothing(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	watcher := new(atomic.Int64) // the breaker's PINGs, should a slow cold read raise a doubt
	short := func(c *Config) {
		c.Test.Linger = 50 * time.Millisecond
		c.Test.ProbeLine = func(l breaker.Line) breaker.Line { return countingLine{l, watcher} }
	}
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), short)
	background := func() int {
		return redistest.CommandStat(t, admin, "ping", "calls") + redistest.CommandStat(t, admin, "info", "calls") - int(watcher.Load())
	}
	trackers := func() int {
		n := 0
		for line := range strings.Lines(admin.ClientList(t.Context()).Val()) {
			if strings.Contains(line, "flags=Pt") {
				n++
			}
		}
		return n
	}
	quiet := func(when string) {
		t.Helper()
		before := background()
		for range 5 {
			if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrNotFound) { // a cold read
				t.Fatal(err)
			}
			time.Sleep(track.VouchEvery) // a poll: the count may only stay
		}
		// The counts' own INFO commandstats, two each: the second count
		// sees the first's second and its own first.
		if got := background() - before - 2; got > 0 || trackers() != 0 || e.c.Stats().InvalidationLive != 0 {
			t.Fatalf("%s: %d PINGs and INFOs in five of a session's periods, %d tracking connections, %d sessions; want none", when, got, trackers(), e.c.Stats().InvalidationLive)
		}
	}
	quiet("with no copy yet")
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	waitFor(t, "the session the first copy starts", func() bool { return e.c.Stats().InvalidationLive == 1 && servesLocally(e.c.e, "p:1") })
	e.tick(DefaultDemoteEvery) // p:1 cools and is demoted
	waitFor(t, "the session to end with the last copy", func() bool { return e.c.Stats().InvalidationLive == 0 })
	quiet("once the last copy was gone")
}

// On a cluster, an instance that keeps no copy reads no topology and has
// no session: the first copy has it read the topology and start the
// nodes' sessions; once the last copy has been gone for the linger (here
// 50 ms) it stops both, and forgets the topology, which the next copy
// reads anew.
func TestAClusterInstanceWithoutCopiesReadsNoTopology(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := t.Context()
	clk := fakeclock.New(epoch)
	short := func(c *Config) { c.Test.Linger = 50 * time.Millisecond }
	c, err := New(cl.Client(t), profileGlue, withClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), short)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	masters, err := cl.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var admins []*redis.Client
	for _, m := range masters {
		admins = append(admins, m.Client(t))
	}
	reads := func() int {
		n := 0
		for _, a := range admins {
			n += redistest.CommandStat(t, a, "cluster|shards", "calls") + redistest.CommandStat(t, a, "ping", "calls")
		}
		return n
	}
	idle := func(when string) {
		t.Helper()
		before := reads()
		for range 5 {
			time.Sleep(250 * time.Millisecond) // a poll over the topology's pace: the count may only stay
		}
		if got := reads() - before; got != 0 || c.Stats().InvalidationLive != 0 || c.e.Copies().Nodes.Followed() {
			t.Fatalf("%s: %d topology reads and PINGs, %d sessions, topology followed %v; want none", when, got, c.Stats().InvalidationLive, c.e.Copies().Nodes.Followed())
		}
	}
	idle("with no copy yet")
	b, _ := msgpack.Marshal(sample(1, "v1"))
	if err := cl.Client(t).Set(ctx, "p:1", b, 0).Err(); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, c: c, clock: clk, ctx: ctx}
	e.heat("p:1")
	waitFor(t, "the topology and the sessions the first copy starts", func() bool {
		e.get("p:1")
		return c.e.Copies().Nodes.Followed() && c.Stats().InvalidationLive > 0 && servesLocally(c.e, "p:1")
	})
	e.tick(DefaultDemoteEvery) // p:1 cools and is demoted
	waitFor(t, "the sessions and the topology to stop", func() bool {
		return c.Stats().InvalidationLive == 0 && !c.e.Copies().Nodes.Followed()
	})
	idle("once the last copy was gone")
}

// countingLine is a breaker's line that counts its PINGs in n.
type countingLine struct {
	breaker.Line
	n *atomic.Int64
}

func (l countingLine) Ping(ctx context.Context, payload ...string) error {
	l.n.Add(1)
	return l.Line.Ping(ctx, payload...)
}

// Repositories on one client share its transport: one session, one vouch
// and one breaker per node. Three of them cost a server the background
// commands of one (the session's PINGs) and one tracking connection;
// unshared, they cost three times as much, which 50 pods
// with five entities each turned into 21k PINGs a second on a master.
func TestThreeRepositoriesOnOneClientCostWhatOneDoes(t *testing.T) {
	one, three := redistest.Start(t), redistest.Start(t)
	opts := []Option{WithInvalidate(InvalidateTracking), withClock(config.Wall{})}
	e1 := newEnvOn(t, one, opts...)
	rdb := three.Client(t)
	var es []*env
	for range 3 {
		es = append(es, newEnvClient(t, three, rdb, opts...))
	}
	for _, e := range append(es, e1) {
		liveSessions(t, e.c, 1)
	}
	background := func(e *env) int {
		return redistest.CommandStat(t, e.raw, "ping", "calls") + redistest.CommandStat(t, e.raw, "info", "calls")
	}
	// A window of 50 of one repository's commands (two seconds, or more
	// on a slow machine), judged by the ratio, not by time. Both servers
	// are asked as often, so the INFO calls that ask count alike.
	base1, base3 := background(e1), background(es[0])
	var got1, got3 int
	for got1 < 50 {
		time.Sleep(20 * time.Millisecond) // a poll
		got1, got3 = background(e1)-base1, background(es[0])-base3
	}
	if got3 > 2*got1 {
		t.Errorf("three repositories on one client sent %d background commands while one sent %d; want those of one", got3, got1)
	}
	trackers := 0
	clients, err := es[0].raw.ClientList(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(clients) {
		for f := range strings.FieldsSeq(line) {
			if flags, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(flags, "t") {
				trackers++
			}
		}
	}
	if trackers != 1 {
		t.Errorf("%d tracking connections for three repositories on one client, want 1:\n%s", trackers, clients)
	}
	t.Logf("background commands in one window: one repository %d, three on one client %d", got1, got3)
}

// The modes a user names are the transport's: the runtime hands
// Config.Invalidate to the hub as it is.
func TestInvalidationModesAreTheTransports(t *testing.T) {
	for _, m := range [][2]string{{InvalidateTracking, track.Tracking}, {InvalidatePubSub, track.PubSub}, {InvalidatePubSubKeys, track.KeyChannels}, {InvalidateOff, track.Off}} {
		if m[0] != m[1] {
			t.Errorf("runtime mode %q, transport mode %q", m[0], m[1])
		}
	}
}

// A session that starts again revalidates, by itself, the copies of its
// node that the lost one left unverified: once it has, the next read of
// the hot key is served from memory without asking Redis. Refresh is off,
// so nothing else reloads them. A hot key this process deleted holds no
// copy to revalidate, and reads as deleted.
func TestASessionThatStartsAgainRevalidatesItsNodesCopies(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking), WithRefresh(0))
	liveSessions(t, e.c, 1)
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	e.put("p:2", sample(2, "v1"))
	e.heat("p:2")
	if err := e.c.Del(e.ctx, "p:2"); err != nil {
		t.Fatal(err)
	}
	if err := e.raw.ClientKillByFilter(e.ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the session to end and another to start", func() bool {
		st := e.c.Stats()
		return st.InvalidationResets >= 1 && st.InvalidationLive == 1
	})
	waitFor(t, "the copy vouched for again", func() bool {
		cp, ok := e.c.e.Copies().Local.Get("p:1")
		return ok && e.c.e.Copies().Fresh(&cp.Meta)
	})
	misses := e.c.Stats().Misses
	if got := e.get("p:1"); got.Name != "v1" {
		t.Fatalf("read %q, want v1", got.Name)
	}
	if n := e.c.Stats().Misses - misses; n != 0 {
		t.Errorf("the read after the session came back missed %d times, want 0: its copy was revalidated", n)
	}
	if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the deleted hot key reads %v, want ErrNotFound", err)
	}
}

// With invalidate=pubsub-keys an instance subscribes to the channel of
// each key it holds, and no other: a write of a key nobody holds costs
// the node what it costs with one instance, eight holding another key or
// not, and a write of a held key sends each holder one message and asks
// nothing back. Counted at the server; with invalidate=pubsub each of the
// eight added a message to every write of the entity.
func TestAKeyChannelWriteOfAKeyNobodyHoldsSendsTheInstancesNothing(t *testing.T) {
	srv := redistest.Start(t)
	es := instances(t, srv, 8, InvalidatePubSubKeys) // each holds p:1
	admin := srv.Client(t)
	if got := admin.PubSubNumSub(t.Context(), track.KeyChannel("p:1")).Val()[track.KeyChannel("p:1")]; got != 8 {
		t.Fatalf("%d subscribers to p:1's channel, want the 8 holders", got)
	}
	// perWrite is the node's bytes out per write, less the answers to the
	// PINGs the sessions send meanwhile (at most 26 bytes each, a stamp of
	// 19 digits): under the race detector the writes take long enough for
	// those to count.
	perWrite := func() float64 {
		const writes = 500
		out := func() int { return infoStat(t, admin, "stats", "total_net_output_bytes") }
		pings := func() int { return redistest.CommandStat(t, admin, "ping", "calls") }
		before, pinged := out(), pings()
		for i := range writes {
			if err := es[0].c.Set(t.Context(), "p:2", sample(int64(i), "x")); err != nil {
				t.Fatal(err)
			}
		}
		return float64(out()-before-26*(pings()-pinged)) / writes
	}
	counts := make([]uint64, len(es))
	for i, e := range es {
		counts[i] = e.c.Stats().Invalidations
	}
	subscribes := redistest.CommandStat(t, admin, "subscribe", "calls")
	if err := es[0].c.Set(t.Context(), "p:1", sample(1, "v2")); err != nil {
		t.Fatal(err)
	}
	for i, e := range es[1:] {
		dropped(t, e, "p:1")
		if got := e.c.Stats().Invalidations - counts[i+1]; got != 1 {
			t.Errorf("instance %d handled %d invalidations of one write of the key it holds, want 1", i+1, got)
		}
		e.heat("p:1") // served from memory again
	}
	// The subscriptions outlive the message: nothing is asked back.
	if got := redistest.CommandStat(t, admin, "subscribe", "calls") - subscribes; got != 0 {
		t.Errorf("the holders sent %d SUBSCRIBEs to serve the key again after its write, want none", got)
	}
	eight := perWrite()
	for _, e := range es[1:] {
		e.c.Close()
	}
	waitFor(t, "the seven closed instances' subscriptions to end", func() bool {
		return admin.PubSubNumSub(t.Context(), track.KeyChannel("p:1")).Val()[track.KeyChannel("p:1")] <= 1
	})
	// The slack is the counts' own INFO.
	one := perWrite()
	t.Logf("bytes out per write, less PINGs' answers: %.1f with 8 instances, %.1f with the writer alone", eight, one)
	if eight > one+2 {
		t.Fatalf("the node sent %.1f bytes per write of a key no instance holds with 8 instances, %.1f with the writer alone", eight, one)
	}
}

// A key-channel session unsubscribes, within a sweep, the channels of the
// keys whose copies are gone, keeps those of the copies still held, and
// subscribes again when a key comes back: a write of it is heard.
func TestAKeyChannelSessionUnsubscribesTheKeysNoLongerHeld(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	subs := func(key string) int64 {
		return admin.PubSubNumSub(t.Context(), track.KeyChannel(key)).Val()[track.KeyChannel(key)]
	}
	e := newEnvOn(t, srv, WithInvalidate(InvalidatePubSubKeys))
	other := newEnvOn(t, srv, WithInvalidate(InvalidatePubSubKeys))
	for _, k := range []string{"p:1", "p:2"} {
		e.put(k, sample(1, "v1"))
		e.heat(k)
	}
	if subs("p:1") != 1 || subs("p:2") != 1 {
		t.Fatalf("subscribers of p:1, p:2: %d, %d; want 1 each", subs("p:1"), subs("p:2"))
	}
	e.tick(DefaultDemoteEvery - time.Second)
	for range 101 { // p:1 stays hot, p:2 cools
		e.get("p:1")
	}
	e.tick(time.Second)
	if e.c.e.Detector().Lookup("p:2") != nil || e.c.e.Detector().Lookup("p:1") == nil {
		t.Fatal("p:2 was not demoted, or p:1 was")
	}
	waitFor(t, "p:2's channel to be unsubscribed", func() bool { return subs("p:2") == 0 })
	if got := subs("p:1"); got != 1 {
		t.Fatalf("%d subscribers of p:1's channel after the sweep, want 1: its copy is held", got)
	}
	e.heat("p:1")
	if err := other.c.Set(other.ctx, "p:1", sample(1, "v2")); err != nil {
		t.Fatal(err)
	}
	e.eventually("p:1", "v2", "after another instance's Set, past a sweep")
	e.heat("p:2")
	if got := subs("p:2"); got != 1 {
		t.Fatalf("%d subscribers of p:2's channel once it is held again, want 1", got)
	}
	if err := other.c.Set(other.ctx, "p:2", sample(1, "v2")); err != nil {
		t.Fatal(err)
	}
	e.eventually("p:2", "v2", "after another instance's Set of a key held again")
}
