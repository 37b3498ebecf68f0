package runtime

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// The benchmarks of this file show how cost grows with the work: see
// "Cost as the work grows" in BENCHMARKS.md for the commands.

// hotSetCache is a Cache holding n hot keys locally, "user:0" to
// "user:<n-1>". Invalidation is off: the notices of its own setup writes
// would otherwise drop copies while the benchmark runs.
func hotSetCache(b *testing.B, n int) (*Cache[string, benchUser], []string) {
	b.Helper()
	c, _ := benchCache(b, WithTopN(n), WithLocalSize(2*n+16), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateOff))
	ctx := context.Background()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
		if err := c.Set(ctx, keys[i], benchValue); err != nil {
			b.Fatal(err)
		}
	}
	forceHot(b, c, keys)
	return c, keys
}

// BenchmarkGetHotSetSize reads hot keys, cycling over hot sets of 1 to
// 1,000 keys: a local hit costs the same whatever the hot set's size.
func BenchmarkGetHotSetSize(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("hot=%d", n), func(b *testing.B) {
			c, keys := hotSetCache(b, n)
			ctx := context.Background()
			misses := c.Stats().Misses
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := c.Get(ctx, keys[i%n]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.StopTimer()
			if st := c.Stats(); st.Misses != misses {
				b.Fatalf("%d hot reads missed", st.Misses-misses)
			}
		})
	}
}

// BenchmarkGetHotParallel reads 100 hot keys from GOMAXPROCS goroutines;
// run it with -cpu 1,2,… to see throughput scale with cores.
func BenchmarkGetHotParallel(b *testing.B) {
	c, keys := hotSetCache(b, 100)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := c.Get(ctx, keys[i%len(keys)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkRefresh refreshes 10, 100 and 1,000 hot keys. round_trips/op
// counts pipelines (one, whatever the count) and mgets/op the MGETs in
// them (one per 500 keys): the cost grows with those, not per key.
func BenchmarkRefresh(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("hot=%d", n), func(b *testing.B) {
			c, _ := hotSetCache(b, n)
			var h cmdCounter
			c.e.Client().AddHook(&h)
			h.snapshot()
			start := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				c.e.Refresh()
			}
			elapsed := time.Since(start)
			pipes, cmds := h.snapshot()
			b.ReportMetric(float64(pipes)/float64(b.N), "round_trips/op")
			b.ReportMetric(float64(cmds["mget"])/float64(b.N), "mgets/op")
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/key")
			if st := c.Stats(); st.RefreshErrors != 0 || st.RegistrySize != n {
				b.Fatalf("refresh errors %d, registered %d of %d", st.RefreshErrors, st.RegistrySize, n)
			}
		})
	}
}
