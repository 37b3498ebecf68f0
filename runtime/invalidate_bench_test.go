package runtime

import (
	"slices"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// BenchmarkInvalidationLatency measures, with four instances on separate
// connections, the time from a write's return on one instance to each of
// the three others dropping its local copy, and reports the median and
// 99th percentile over all drops (0 when the copy went first).
func BenchmarkInvalidationLatency(b *testing.B) {
	for _, mode := range []string{InvalidateTracking, InvalidatePubSub} {
		b.Run(mode, func(b *testing.B) { benchInvalidation(b, mode) })
	}
}

func benchInvalidation(b *testing.B, mode string) {
	srv := redistest.Start(b)
	const n = 4
	caches := make([]*Cache[string, benchUser], n)
	drops := make([]chan time.Time, n)
	for i := range caches {
		drops[i] = make(chan time.Time, 16)
		hook := func(keys []string) {
			if slices.Contains(keys, "user:42") {
				drops[i] <- time.Now()
			}
		}
		c, err := New(srv.Client(b), Glue[string, benchUser]{Key: ident, Clone: cloneBenchUser, Prefix: "user:"},
			withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(mode),
			func(c *Config) { c.Test.OnInvalidate = hook })
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		deadline := time.Now().Add(10 * time.Second)
		for c.Stats().InvalidationLive == 0 {
			if time.Now().After(deadline) {
				b.Fatal("no invalidation subscription")
			}
			time.Sleep(time.Millisecond)
		}
		caches[i] = c
	}
	ctx := b.Context()
	if err := caches[0].Set(ctx, "user:42", benchValue); err != nil {
		b.Fatal(err)
	}
	for _, c := range caches {
		for range 101 {
			c.Get(ctx, "user:42")
		}
	}
	drain := func() {
		for _, d := range drops {
			for len(d) > 0 {
				<-d
			}
		}
	}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for _, c := range caches[1:] {
			if _, err := c.Get(ctx, "user:42"); err != nil { // reload the copy
				b.Fatal(err)
			}
		}
		drain()
		b.StartTimer()
		if err := caches[0].Set(ctx, "user:42", benchValue); err != nil {
			b.Fatal(err)
		}
		wrote := time.Now()
		for _, d := range drops[1:] {
			select {
			case t := <-d:
				// A copy can go before Set hands control back to its
				// caller: Redis announces a write as it applies it.
				lat = append(lat, max(0, t.Sub(wrote)))
			case <-time.After(5 * time.Second):
				b.Fatal("an instance never saw the write")
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
