package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// BenchmarkRecoveryAfterAnOutage measures, after a 2 s SIGKILL outage,
// the time from Redis accepting connections again to the first cold read
// that succeeds, and to the application's first command, when the
// application marks a change every 100 ms (each in its own goroutine, as
// a binlog reader would) through the repository's client ("shared") or a
// client of its own ("own"). go-redis's pool stops dialling after
// PoolSize failed dials and redials once a second (internal/pool
// tryDial): the shared client's reads wait for that redial; docs/failures.md "When
// Redis fails" gives the figures.
func BenchmarkRecoveryAfterAnOutage(b *testing.B) {
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "shared", false: "own"}[shared]
		b.Run(name, func(b *testing.B) {
			var coldMax, appMax time.Duration
			for b.Loop() {
				cold, app := recoverOnce(b, shared)
				coldMax, appMax = max(coldMax, cold), max(appMax, app)
			}
			b.ReportMetric(float64(coldMax.Microseconds())/1000, "ms-to-cold-read")
			b.ReportMetric(float64(appMax.Microseconds())/1000, "ms-to-app-command")
		})
	}
}

func recoverOnce(b *testing.B, shared bool) (cold, app time.Duration) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	appc := rdb
	if !shared {
		appc = redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer appc.Close()
	}
	c, err := New(rdb, profileGlue, WithEntity("profile"), WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	every := func(d time.Duration, f func()) {
		wg.Go(func() {
			t := time.NewTicker(d)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					f()
				}
			}
		})
	}
	every(time.Millisecond, func() { c.Get(ctx, "p:1") })
	every(100*time.Millisecond, func() { wg.Go(func() { appc.Set(ctx, "mark", 1, 0) }) })
	defer func() { close(stop); wg.Wait() }()

	srv.Kill()
	time.Sleep(2 * time.Second) // the outage
	srv.Restart(b)
	back := time.Now()
	for _, err := c.Get(ctx, "p:2"); !errors.Is(err, ErrNotFound); _, err = c.Get(ctx, "p:2") {
		time.Sleep(100 * time.Microsecond)
	}
	cold = time.Since(back)
	for appc.Set(ctx, "mark", 1, 0).Err() != nil {
		time.Sleep(100 * time.Microsecond)
	}
	return cold, time.Since(back)
}
