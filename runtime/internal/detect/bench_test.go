package detect

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks of this file show how detection's cost grows with the
// work, against the map recorder it replaced: see BENCHMARKS.md for the
// commands.

func TestRecorderTopOfASlot(t *testing.T) {
	r := NewRecorder(testConfig(func(p *Params) { p.Aggregate = true }), epoch, ident)
	s0 := epoch.UnixNano() / int64(r.Slot())
	recordN(r, "a", 5)
	recordN(r, "c", 3)
	recordN(r, "b", 3)
	recordN(r, "d", 1)
	if got := r.Top(s0, 3); got != nil {
		t.Fatalf("Top of the slot being filled = %v, want nil", got)
	}
	r.Advance(epoch.Add(r.Slot()))
	recordN(r, "d", 9) // the next slot's reads do not count
	want := []SlotCount[string]{{"a", "a", 5}, {"b", "b", 3}, {"c", "c", 3}}
	if got := r.Top(s0, 3); !slices.Equal(got, want) {
		t.Errorf("Top(s0, 3) = %v, want %v (ties by name)", got, want)
	}
	if got := r.Top(s0, 10); len(got) != 4 || got[3] != (SlotCount[string]{"d", "d", 1}) {
		t.Errorf("Top(s0, 10) = %v, want all four", got)
	}
	if got := r.Top(s0, 0); got != nil {
		t.Errorf("Top(s0, 0) = %v", got)
	}
	r.Advance(epoch.Add(Ring * r.Slot()))
	if got := r.Top(s0, 3); got != nil {
		t.Errorf("Top of a slot gone from the window = %v, want nil", got)
	}
}

// BenchmarkRecorderTop measures the CPU side of a report at the default
// recorder_size: finding the AggregateTop busiest of the tracked keys in
// one slot.
func BenchmarkRecorderTop(b *testing.B) {
	r := NewRecorder(testConfig(func(p *Params) { p.Aggregate = true }), epoch, ident)
	for i := range testConfig().RecorderSize {
		key := "p:" + strconv.Itoa(i)
		for range 1 + i%7 {
			r.Record(key)
		}
	}
	slot := r.Current()
	r.Advance(epoch.Add(r.Slot()))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if top := r.Top(slot, 50); len(top) != 50 {
			b.Fatalf("Top returned %d keys", len(top))
		}
	}
}

// BenchmarkRecord records accesses from every goroutine over 100,000
// keys already seen, with the Recorder and, in the same run, the map
// recorder it replaced. The slot advances with the wall clock, every
// 100 ms, as the Cache's background loop advances it, so the keys' rates
// are those of the benchmark's own traffic.
func BenchmarkRecord(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	for _, impl := range recorders {
		b.Run(impl.name, func(b *testing.B) {
			r := impl.make(testConfig(func(p *Params) { p.Window = time.Second }), time.Now())
			for _, k := range keys {
				r.Record(k)
			}
			done := make(chan struct{})
			ticked := make(chan struct{})
			go func() {
				defer close(ticked)
				t := time.NewTicker(100 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-done:
						return
					case now := <-t.C:
						r.Advance(now)
					}
				}
			}()
			var seq atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := seq.Add(1) * 7919 // each goroutine walks from its own offset
				for pb.Next() {
					r.Record(keys[i%n])
					i++
				}
			})
			b.StopTimer()
			close(done)
			<-ticked
		})
	}
}

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
	make func(Params, time.Time) keyRecorder
}{
	{"sketch", func(cfg Params, now time.Time) keyRecorder { return NewRecorder(cfg, now, ident) }},
	{"map", func(cfg Params, now time.Time) keyRecorder { return newMapRecorder(cfg, now, ident) }},
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
			cfg := testConfig()
			buf := make([]byte, sh.length)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			now := epoch
			r := impl.make(cfg, now)
			var tickMax time.Duration
			for i := range sh.keys {
				if i > 0 && i%100_000 == 0 {
					now = now.Add(cfg.Window / Slots)
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
