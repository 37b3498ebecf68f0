package runtime

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// Stats says which instance it describes, and which invalidation is in
// effect.
func TestStatsNamesTheInstance(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	st := newEnv(t).c.Stats()
	if st.Host != host || st.PID != os.Getpid() {
		t.Fatalf("Host %q PID %d, want %q %d", st.Host, st.PID, host, os.Getpid())
	}
	// Refresh alone keeps copies fresh: nothing is down, nothing connected.
	if st.Invalidation != InvalidateOff || st.InvalidationConnected() || !st.InvalidationDownSince.IsZero() || !st.RedisDownSince.IsZero() {
		t.Fatalf("invalidate=off: %q connected %v down since %v, Redis down since %v", st.Invalidation, st.InvalidationConnected(), st.InvalidationDownSince, st.RedisDownSince)
	}
}

// An outage shows in Stats as it happens: since when Redis is unreachable
// and invalidation lost, and, in History, the errors and stale reads of
// the second; both clear when Redis is back.
func TestStatsShowAnOutageAndItsEnd(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithInvalidate(InvalidateTracking))
	// No copy is kept, so none waits for a session: nothing is down.
	if st := e.c.Stats(); !st.InvalidationConnected() || st.InvalidationLive != 0 {
		t.Fatalf("with no copy kept: connected %v, %d sessions live; want connected, none", st.InvalidationConnected(), st.InvalidationLive)
	}
	liveSessions(t, e.c, 1)
	st := e.c.Stats()
	if st.Invalidation != InvalidateTracking || !st.InvalidationConnected() || !st.RedisDownSince.IsZero() {
		t.Fatalf("with the session live: %q connected %v, Redis down since %v", st.Invalidation, st.InvalidationConnected(), st.RedisDownSince)
	}
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
	e.tick(time.Second) // a mark just before the outage
	before := e.c.Stats()

	down := e.clock.Now() // the clock stands still until the next mark
	srv.Kill()
	for range 4 {
		if _, err := e.c.Get(e.ctx, "p:2"); err == nil {
			t.Fatal("a cold read succeeded with Redis down")
		}
	}
	for range 5 {
		if v, err := e.c.Get(e.ctx, "p:1"); err != nil || v.Name != "v1" {
			t.Fatalf("hot read during the outage: %+v, %v", v, err)
		}
	}
	waitFor(t, "the session's loss", func() bool { return !e.c.Stats().InvalidationDownSince.IsZero() })
	st = e.c.Stats()
	if !st.RedisDownSince.Equal(down) || !st.InvalidationDownSince.Equal(down) || st.InvalidationConnected() {
		t.Fatalf("during the outage at %v: Redis down since %v, invalidation down since %v, connected %v", down, st.RedisDownSince, st.InvalidationDownSince, st.InvalidationConnected())
	}
	e.tick(time.Second)
	after := e.c.Stats()
	h := e.c.History()
	last := h[len(h)-1]
	wantErrs := after.RedisErrors + after.FailedFast - before.RedisErrors - before.FailedFast
	wantStale := after.StaleReads - before.StaleReads
	if wantErrs < 4 || wantStale < 5 || last.RedisErrors != float64(wantErrs) || last.StaleReads != float64(wantStale) {
		t.Fatalf("last second %+v, want %d Redis errors (at least the 4 cold reads) and %d stale reads (at least 5) a second", last, wantErrs, wantStale)
	}

	srv.Restart(t)
	waitFor(t, "Redis and the session back", func() bool {
		st := e.c.Stats()
		return st.RedisDownSince.IsZero() && st.InvalidationConnected()
	})
	if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cold read after the outage = %v, want ErrNotFound", err)
	}
}
