package runtime

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// The benchmarks of this file show how cost grows with the work: see
// "Cost as the work grows" in BENCHMARKS.md for the commands.

// keyRecorder is what the detection benchmarks drive: the Recorder, and
// the map recorder of 0.1 it replaced (baseline_recorder_test.go).
type keyRecorder interface {
	Record(string) bool
	Advance(time.Time)
	Len() int
}

// recorders builds each implementation for a run of the same benchmark.
var recorders = []struct {
	name string
	make func(Config, time.Time) keyRecorder
}{
	{"sketch", func(cfg Config, now time.Time) keyRecorder { return NewRecorder(cfg, now, ident) }},
	{"map", func(cfg Config, now time.Time) keyRecorder { return newMapRecorder(cfg, now, ident) }},
}

// paddedKey writes key i into buf, padded with 'x' to len(buf), and
// returns it as a new string.
func paddedKey(buf []byte, i int) string {
	n := copy(buf, strconv.Itoa(i))
	for j := n; j < len(buf); j++ {
		buf[j] = 'x'
	}
	return string(buf)
}

// BenchmarkRecorderScale records accesses spread over 1,000 to 10,000,000
// distinct keys of 16 bytes, and over 1,000,000 keys of 10 bytes to 1 KiB,
// with each recorder at the default configuration. Before timing, every
// key is recorded once, the slot advancing every 100,000 accesses as it
// would under 100,000 reads a second; recorder_MB is the heap the recorder
// holds then, tick_max_us the longest Advance, tracked the keys it holds
// by name. Timed: recording the same keys again.
func BenchmarkRecorderScale(b *testing.B) {
	type shape struct{ keys, length int }
	shapes := []shape{{1_000, 16}, {100_000, 16}, {1_000_000, 16}, {10_000_000, 16}, {1_000_000, 10}, {1_000_000, 100}, {1_000_000, 1024}}
	for _, sh := range shapes {
		for _, impl := range recorders {
			cfg := DefaultConfig()
			buf := make([]byte, sh.length)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			now := epoch
			r := impl.make(cfg, now)
			var tickMax time.Duration
			for i := range sh.keys {
				if i > 0 && i%100_000 == 0 {
					now = now.Add(cfg.Window / slots)
					start := time.Now()
					r.Advance(now)
					tickMax = max(tickMax, time.Since(start))
				}
				r.Record(paddedKey(buf, i))
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heapMB := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
			keys := make([]string, min(sh.keys, 100_000))
			for i := range keys {
				keys[i] = paddedKey(buf, i*7919%sh.keys)
			}
			b.Run(fmt.Sprintf("keys=%d/len=%d/%s", sh.keys, sh.length, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					r.Record(keys[i%len(keys)])
					i++
				}
				b.ReportMetric(heapMB, "recorder_MB")
				b.ReportMetric(float64(tickMax.Microseconds()), "tick_max_us")
				b.ReportMetric(float64(r.Len()), "tracked")
			})
			runtime.KeepAlive(r)
		}
	}
}

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
			c.rdb.AddHook(&h)
			h.snapshot()
			start := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				c.refresh()
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
