package runtime

import (
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

func TestCacheHistoryCountsHitsAndRedisReads(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.tick(time.Second) // first mark
	e.heat("p:1")       // 99 cold reads, the promoting miss, a hit
	for range 20 {
		e.get("p:1")
	}
	e.tick(time.Second)
	h := e.c.History()
	if len(h) == 0 {
		t.Fatal("no history after two ticks")
	}
	s := h[len(h)-1]
	if s.Reads != 121 || s.Hits != 21 || s.RedisReads != 100 {
		t.Fatalf("last sample %+v: want 121 reads, 21 hits, 100 Redis reads a second", s)
	}
}

// A Redis that hangs stops none of the tick's own work. A frozen server
// accepts connections and answers nothing; with no read timeout, the
// refresh (and, with aggregation, the cluster read and the report) waits
// on it until it goes on. Meanwhile every tick still adds its sample to
// History, and the samples show the second's failed-fast and stale reads,
// while each job skipped because its last run still waits is logged once.
// (Issue 21, finding 4: the live page showed "Redis errors/s 0" and
// "stale reads/s 0" 2.5 s into an outage.)
func TestHistoryGoesOnWhileRedisHangs(t *testing.T) {
	for _, agg := range []bool{false, true} {
		t.Run("aggregate="+strconv.FormatBool(agg), func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: -1}) // a command waits for its answer as long as it takes
			t.Cleanup(func() { rdb.Close() })
			var logs syncBuffer
			e := newEnvClient(t, srv, rdb, WithInvalidate(InvalidateTracking), WithRefresh(time.Second),
				WithAggregate(agg), WithPromoteEvery(time.Second), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			liveSessions(t, e.c, 1)
			e.put("p:1", sample(1, "ada"))
			e.heat("p:1")
			e.tick(time.Second) // a mark before the hang

			srv.Hang(t)
			tickAlone(t, e) // its refresh, and cluster read, wait on the frozen server
			// The breaker opens, as it does when the first command times
			// out (none does here): a ping of the frozen server fails.
			if !e.c.e.Copies().Nodes.One.Check(e.ctx) {
				t.Fatal("the frozen server answered a ping")
			}
			prev := e.c.Stats()
			for i := range 3 {
				for range 20 {
					if _, err := e.c.Get(e.ctx, "p:2"); !errors.Is(err, ErrUnavailable) {
						t.Fatalf("cold read with Redis frozen = %v, want ErrUnavailable", err)
					}
				}
				for range 3 {
					if v, err := e.c.Get(e.ctx, "p:1"); err != nil || v.Name != "ada" {
						t.Fatalf("hot read with Redis frozen = %+v, %v", v, err)
					}
				}
				n := len(e.c.History())
				tickAlone(t, e)
				h := e.c.History()
				last := h[len(h)-1]
				if len(h) != n+1 || !last.At.Equal(e.clock.Now()) {
					t.Fatalf("second %d of the hang: %d samples, the last %+v; want %d, the last at %v", i, len(h), last, n+1, e.clock.Now())
				}
				st := e.c.Stats()
				errs := st.RedisErrors + st.FailedFast - prev.RedisErrors - prev.FailedFast
				stale := st.StaleReads - prev.StaleReads
				if errs < 20 || stale < 3 || last.RedisErrors != float64(errs) || last.StaleReads != float64(stale) {
					t.Fatalf("second %d of the hang: sample %+v; want %d Redis errors (at least the 20 cold reads) and %d stale reads (at least 3) a second", i, last, errs, stale)
				}
				prev = st
			}
			if skips := logs.linesWith("still waits on Redis"); len(logs.linesWith("job=refresh")) != 1 {
				t.Errorf("skipped runs logged as %q; want one line for each job that waits, the refresh among them", skips)
			}
			for _, job := range []string{"refresh", `"aggregation report"`, `"cluster read"`} {
				if n := len(logs.linesWith("job=" + job)); n > 1 {
					t.Errorf("the skipped runs of %s were logged in %d lines, want at most 1", job, n)
				}
			}
		})
	}
}

// tickAlone runs the tick a second on from the clock's time on a
// goroutine of its own, and waits for it; one still running after a
// generous deadline fails the test: such a tick waits on Redis.
func tickAlone(t *testing.T, e *env) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.c.e.TickOnly(e.clock.Advance(time.Second))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the tick still waits on Redis after 10s")
	}
}
