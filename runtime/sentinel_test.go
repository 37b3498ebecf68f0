package runtime

import (
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// TestTrackingFollowsASentinelFailover runs two instances over Sentinel
// failover clients: a write through one drops the other's copy, before and
// after the sentinel promotes the replica. The old master stays up, as in a
// planned switchover; the sentinel demotes it, killing its clients, only
// some ten seconds later, so invalidation must move to the new master on
// its own.
func TestTrackingFollowsASentinelFailover(t *testing.T) {
	sn := redistest.StartSentinel(t)
	ctx := t.Context()
	newCache := func() *Cache[string, profile] {
		c, err := New(sn.Client(t), profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateTracking))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		liveSessions(t, c, 1)
		return c
	}
	a, b := newCache(), newCache()

	// writeDrops heats key on to, writes it through from, and checks that
	// to drops its copy and reads the new value.
	writeDrops := func(from, to *Cache[string, profile], key, name string) {
		t.Helper()
		if err := from.Set(ctx, key, sample(1, name+", old")); err != nil {
			t.Fatal(err)
		}
		for range 101 {
			if _, err := to.Get(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		if !holds(to.e, key) {
			t.Fatalf("%s not held after 101 reads", key)
		}
		if err := from.Set(ctx, key, sample(1, name)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the copy of "+key+" to be invalidated after a write "+name, func() bool { return !servesLocally(to.e, key) })
		if v, err := to.Get(ctx, key); err != nil || v.Name != name {
			t.Fatalf("read %s as %+v, %v; want %q", key, v, err, name)
		}
	}
	writeDrops(a, b, "p:1", "before the failover")

	sc := redis.NewSentinelClient(&redis.Options{Addr: sn.SentinelAddrs[0]})
	t.Cleanup(func() { sc.Close() })
	if err := sc.Failover(ctx, sn.MasterName).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the sentinel to promote the replica", func() bool {
		addr, err := sc.GetMasterAddrByName(ctx, sn.MasterName).Result()
		return err == nil && len(addr) == 2 && net.JoinHostPort(addr[0], addr[1]) == sn.Replica.Addr
	})
	promoted := time.Now()
	for name, c := range map[string]*Cache[string, profile]{"a": a, "b": b} {
		waitFor(t, name+"'s invalidation to reconnect, to the new master", func() bool {
			st := c.Stats()
			return st.InvalidationResets >= 1 && st.InvalidationLive == 1
		})
	}
	// Past about five seconds, invalidation came back only because the
	// sentinel demoted the old master and killed its connections: until
	// then it was listening to a master nobody wrote to.
	if d := time.Since(promoted); d > 5*time.Second {
		t.Fatalf("invalidation reconnected %v after the promotion, want within 5s", d.Round(100*time.Millisecond))
	}
	writeDrops(a, b, "p:2", "after the failover")
	writeDrops(b, a, "p:3", "after the failover, the other way")
}

// A Sentinel failover client's master moves under a live pool. Its
// session learns where the client goes from the client's own dials, and
// nudges it only when its pool loses connections, as it does when the
// client switches (TestTrackingFollowsASentinelFailover): while the pool
// keeps them, following costs the node nothing, no INFO and no nudge.
func TestASentinelClientsSessionAsksTheNodeNothingToFollowIt(t *testing.T) {
	sn := redistest.StartSentinel(t)
	rdb := sn.Client(t)
	c, err := New(rdb, profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateTracking))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, ctx: t.Context()}
	if err := c.Set(e.ctx, "p:1", sample(1, "v1")); err != nil { // and a pooled connection, as a service's
		t.Fatal(err)
	}
	e.heat("p:1") // the session vouches while a copy is kept
	sent := new(calls)
	rdb.AddHook(sent)
	master := sn.Master.Client(t)
	pings := redistest.CommandStat(t, master, "ping", "calls")
	waitFor(t, "50 PINGs of the session", func() bool { return redistest.CommandStat(t, master, "ping", "calls")-pings >= 50 })
	if sent.of("info")+sent.of("ping") != 0 {
		t.Fatalf("through the client: %d INFO and %d PING, want none", sent.of("info"), sent.of("ping"))
	}
}
