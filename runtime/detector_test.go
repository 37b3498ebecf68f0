package runtime

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
)

type testDetector struct {
	*fresh.Detector[string]
	clock   *fakeclock.Clock
	dropped []string
}

func newTestDetector(opts ...Option) *testDetector {
	clk := fakeclock.New(epoch)
	cfg := testConfig(append([]Option{withClock(clk), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	td := &testDetector{clock: clk}
	td.Detector = fresh.NewDetector(engine.Detection(cfg), ident, func(e *fresh.Entry[string]) { td.dropped = append(td.dropped, e.K) })
	return td
}

func (d *testDetector) hotKeys() []string {
	var ks []string
	for k := range d.Set.Load().ByKey {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// advance moves the clock and the recorder's window by dt.
func (d *testDetector) advance(dt time.Duration) { d.Rec.Advance(d.clock.Advance(dt)) }

func TestInlinePromotionWithinOneSlot(t *testing.T) {
	d := newTestDetector(WithHotQPS(3000))
	// Ten times hot_qps, that is 30000 reads/s: the 3000th read of the slot
	// lands a tenth of a second in, and promotes the key at once.
	for range 2999 {
		d.Observe("k")
	}
	if d.Lookup("k") != nil {
		t.Fatal("promoted before reaching the hot rate")
	}
	d.Observe("k")
	if d.Lookup("k") == nil {
		t.Fatal("not promoted on the access that reached the hot rate")
	}
	if got := d.Promotions.Load(); got != 1 {
		t.Fatalf("promotions = %d, want 1", got)
	}
}

func TestInlinePromotionRespectsTopN(t *testing.T) {
	d := newTestDetector(WithHotQPS(100), WithWarmQPS(10), WithTopN(1))
	for range 500 {
		d.Observe("strong")
	}
	for range 100 {
		d.Observe("weak") // crosses, but ranks below the incumbent
	}
	if got := d.hotKeys(); !slices.Equal(got, []string{"strong"}) {
		t.Fatalf("hot = %v, want [strong]", got)
	}
	d.advance(time.Second)
	for range 100 {
		d.Observe("stronger")
	}
	// In the new slot "strong" still scores 500 from the previous one.
	if got := d.hotKeys(); !slices.Equal(got, []string{"strong"}) {
		t.Fatalf("hot = %v, want [strong]", got)
	}
	for range 2000 {
		d.Observe("stronger")
	}
	d.Reselect(detect.PromotePass)
	if got := d.hotKeys(); !slices.Equal(got, []string{"stronger"}) {
		t.Fatalf("hot = %v, want [stronger] to displace strong", got)
	}
}

// A newcomer that reaches hot_qps while the hot set is full ties with
// the incumbents and stays out; at twice the rate, still within the slot,
// it is promoted without waiting for the next selection.
func TestInlinePromotionRetriesAsTheRateClimbs(t *testing.T) {
	d := newTestDetector(WithHotQPS(100), WithWarmQPS(10), WithTopN(1))
	for range 100 {
		d.Observe("incumbent")
	}
	d.advance(time.Second)
	for range 100 {
		d.Observe("incumbent")
	}
	for range 199 {
		d.Observe("newcomer")
	}
	if got := d.hotKeys(); !slices.Equal(got, []string{"incumbent"}) {
		t.Fatalf("hot = %v: a newcomer at the incumbent's rate displaced it", got)
	}
	d.Observe("newcomer") // the 200th read: twice the hot rate
	if got := d.hotKeys(); !slices.Equal(got, []string{"newcomer"}) {
		t.Fatalf("hot = %v, want [newcomer] promoted inline at twice the hot rate", got)
	}
}

// TestDemotionCleansUp: the detector hands a key that cooled to demote
// once (a Cache's demote marks it dead and drops its copy:
// TestADemotedKeyStoresNoReadInFlight).
func TestDemotionCleansUp(t *testing.T) {
	d := newTestDetector(WithHotQPS(100), WithWarmQPS(10))
	for range 100 {
		d.Observe("k")
	}
	e := d.Lookup("k")
	if e == nil {
		t.Fatal("k not promoted")
	}

	d.advance(5 * time.Second) // still warm: 100 reads in the window = 10 QPS
	d.Reselect(detect.DemotePass)
	if d.Lookup("k") == nil {
		t.Fatal("demoted while warm")
	}
	d.advance(6 * time.Second) // the window no longer holds the reads
	d.Reselect(detect.DemotePass)
	if d.Lookup("k") != nil {
		t.Fatal("still in the hot set after cooling")
	}
	if !slices.Equal(d.dropped, []string{"k"}) {
		t.Fatalf("keys forgotten: %v, want [k]", d.dropped)
	}
	if got := d.Demotions.Load(); got != 1 {
		t.Fatalf("demotions = %d, want 1", got)
	}
}

// TestDetectionZipf plays a Zipf stream over 100,000 keys through a fake
// clock and checks that the hot set is exactly the keys at or above
// hot_qps within the top top_n: precision and recall 1.0.
func TestDetectionZipf(t *testing.T) {
	const (
		keys    = 100_000
		perSec  = 100_000 // offered reads per second
		zipfS   = 0.99    // YCSB's constant
		hotQPS  = 500
		seconds = 10
	)
	// Each key's reads per second: perSec * (1/i^s) / H, rounded down, so
	// the stream is stationary and the expected set is exact.
	var h float64
	for i := 1; i <= keys; i++ {
		h += 1 / math.Pow(float64(i), zipfS)
	}
	counts := make([]int, keys)
	var stream []int
	for i := range counts {
		counts[i] = int(perSec / math.Pow(float64(i+1), zipfS) / h)
		for range counts[i] {
			stream = append(stream, i)
		}
	}
	for _, topN := range []int{10, 50} {
		t.Run("top_n="+strconv.Itoa(topN), func(t *testing.T) {
			var want []string
			for i, c := range counts { // counts fall with i: the first ones rank highest
				if c >= hotQPS && len(want) < topN {
					want = append(want, "k:"+strconv.Itoa(i))
				}
			}
			slices.Sort(want)
			if len(want) < 10 {
				t.Fatalf("stream too flat: only %d keys above hot_qps", len(want))
			}

			d := newTestDetector(WithHotQPS(hotQPS), WithWarmQPS(100), WithTopN(topN), WithLocalSize(topN))
			rng := rand.New(rand.NewPCG(1, 2))
			names := make([]string, keys)
			for i := range names {
				names[i] = "k:" + strconv.Itoa(i)
			}
			for s := range seconds {
				rng.Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
				for _, i := range stream {
					d.Observe(names[i])
				}
				if s == 0 && len(d.hotKeys()) == 0 {
					t.Fatal("nothing promoted inline during the first second")
				}
				d.advance(time.Second)
				if (s+1)%5 == 0 {
					d.Reselect(detect.PromotePass)
				}
			}
			d.Reselect(detect.PromotePass | detect.DemotePass)
			if got := d.hotKeys(); !slices.Equal(got, want) {
				t.Fatalf("hot set differs from the exact answer\n got: %v\nwant: %v", got, want)
			}
		})
	}
}

// BenchmarkDetectionAccuracy plays a Zipf stream (s = 0.99) of 100,000
// reads a second over 1,000,000 keys through the detect.Recorder on a fake
// clock, for 60 s; every 10 s the popular keys change (the ranking is
// rotated by 100,000 keys). At the end of each second, once the first
// window is full, the top_n keys by the recorder's rates are compared
// with the top_n by an exact count over the same window: precision and
// recall are reported, averaged over the seconds.
func BenchmarkDetectionAccuracy(b *testing.B) {
	const (
		keys    = 1_000_000
		perSec  = 100_000
		zipfS   = 0.99
		seconds = 60
		shiftAt = 10
		topN    = DefaultTopN
	)
	cdf := make([]float64, keys)
	var sum float64
	for i := range cdf {
		sum += 1 / math.Pow(float64(i+1), zipfS)
		cdf[i] = sum
	}
	names := make([]string, keys)
	for i := range names {
		names[i] = "k:" + strconv.Itoa(i)
	}
	for b.Loop() {
		cfg := testConfig(WithHotQPS(DefaultHotQPS))
		r := detect.NewRecorder(engine.Detection(cfg).Recorder, epoch, ident)
		rng := rand.New(rand.NewPCG(3, 4))
		exact := make([][detect.Ring]uint32, keys)
		var precision, recall float64
		var judged int
		for s := range seconds {
			now := epoch.Add(time.Duration(s) * time.Second)
			r.Advance(now)
			cell := r.Current() % detect.Ring
			for i := range exact {
				exact[i][cell] = 0
			}
			shift := (s / shiftAt) * 100_000
			for range perSec {
				rank, _ := slices.BinarySearch(cdf, rng.Float64()*sum)
				k := (min(rank, keys-1) + shift) % keys
				exact[k][cell]++
				r.Record(names[k])
			}
			if s < detect.Slots {
				continue
			}
			// Both sides rank the window's complete slots, as QPS does.
			type scored struct {
				key   string
				count float64
			}
			var truth []scored
			for i := range exact {
				var total uint32
				for c := range detect.Ring {
					if int64(c) != cell {
						total += exact[i][c]
					}
				}
				if total > 0 {
					truth = append(truth, scored{names[i], float64(total)})
				}
			}
			byCount := func(a, b scored) int { return cmp.Or(cmp.Compare(b.count, a.count), cmp.Compare(a.key, b.key)) }
			slices.SortFunc(truth, byCount)
			var found []scored
			for _, kr := range r.Rates(0) {
				found = append(found, scored{kr.Name, kr.QPS})
			}
			slices.SortFunc(found, byCount)
			want := map[string]bool{}
			for _, t := range truth[:min(topN, len(truth))] {
				want[t.key] = true
			}
			hit := 0
			got := found[:min(topN, len(found))]
			for _, f := range got {
				if want[f.key] {
					hit++
				}
			}
			precision += float64(hit) / float64(max(1, len(got)))
			recall += float64(hit) / float64(len(want))
			judged++
		}
		b.ReportMetric(precision/float64(judged), "precision")
		b.ReportMetric(recall/float64(judged), "recall")
	}
}

// lockProbe is a log handler that records, for each line, whether the
// detector's mutex was free when the line was written.
type lockProbe struct {
	d     *fresh.Detector[string]
	lines []string
	held  []string
}

func (h *lockProbe) Enabled(context.Context, slog.Level) bool { return true }
func (h *lockProbe) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lockProbe) WithGroup(string) slog.Handler            { return h }
func (h *lockProbe) Handle(_ context.Context, r slog.Record) error {
	h.lines = append(h.lines, r.Message)
	if !h.d.Mu.TryLock() {
		h.held = append(h.held, r.Message)
		return nil
	}
	h.d.Mu.Unlock()
	return nil
}

// Promotions and demotions are logged after the detector's lock is
// released: an inline promotion runs on the read path, and a slow log
// handler must not stall every reader that needs the lock meanwhile.
func TestHotSetChangesAreLoggedOutsideTheLock(t *testing.T) {
	h := &lockProbe{}
	d := newTestDetector(WithHotQPS(100), WithWarmQPS(10), WithLogger(slog.New(h)))
	h.d = d.Detector
	for range 100 {
		d.Observe("k") // promoted inline
	}
	d.advance(time.Minute)
	d.Reselect(detect.DemotePass) // demoted
	if len(h.lines) != 2 || len(h.held) != 0 {
		t.Fatalf("logged %q, of which %q with the detector's lock held; want a promotion and a demotion, neither under the lock", h.lines, h.held)
	}
}
