package runtime

import (
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

func TestHistoryRates(t *testing.T) {
	var h history
	t0 := time.Unix(1000, 0)
	if got := h.samples(); got != nil {
		t.Fatalf("empty history = %v", got)
	}
	h.add(total{at: t0})
	h.add(total{at: t0.Add(500 * time.Millisecond), reads: 50, hits: 50}) // under a second: ignored
	h.add(total{at: t0.Add(time.Second), reads: 100, hits: 60, errs: 3, stales: 7})
	h.add(total{at: t0.Add(3 * time.Second), reads: 300, hits: 260, errs: 3, stales: 27}) // two seconds later
	got := h.samples()
	want := []Sample{
		{At: t0.Add(time.Second), Reads: 100, Hits: 60, RedisReads: 40, RedisErrors: 3, StaleReads: 7},
		{At: t0.Add(3 * time.Second), Reads: 100, Hits: 100, RedisReads: 0, RedisErrors: 0, StaleReads: 10},
	}
	if len(got) != len(want) {
		t.Fatalf("samples = %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i] != want[i] {
			t.Fatalf("sample %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestHistoryKeepsTenMinutes(t *testing.T) {
	var h history
	t0 := time.Unix(1000, 0)
	for i := range 2 * HistoryLen {
		h.add(total{at: t0.Add(time.Duration(i) * time.Second), reads: uint64(i * 10)})
	}
	got := h.samples()
	if len(got) != HistoryLen {
		t.Fatalf("%d samples, want %d", len(got), HistoryLen)
	}
	last := t0.Add(time.Duration(2*HistoryLen-1) * time.Second)
	if !got[len(got)-1].At.Equal(last) || !got[0].At.Equal(last.Add(-(HistoryLen-1)*time.Second)) {
		t.Fatalf("window %v..%v, want the last %d seconds up to %v", got[0].At, got[len(got)-1].At, HistoryLen, last)
	}
	for _, s := range got {
		if s.Reads != 10 {
			t.Fatalf("sample %+v: want 10 reads/s", s)
		}
	}
}

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
			waitFor(t, "the session", func() bool { return e.c.Stats().InvalidationLive == 1 })
			e.put("p:1", sample(1, "ada"))
			e.heat("p:1")
			e.tick(time.Second) // a mark before the hang

			srv.Hang(t)
			tickAlone(t, e) // its refresh, and cluster read, wait on the frozen server
			// The breaker opens, as it does when the first command times
			// out (none does here): a ping of the frozen server fails.
			if !e.c.copies.nodes.One.Check() {
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
		e.c.tick(e.clock.Advance(time.Second))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the tick still waits on Redis after 10s")
	}
}
