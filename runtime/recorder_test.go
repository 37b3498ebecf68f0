package runtime

import (
	"strconv"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testConfig(opts ...Option) Config {
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// ident names a string key by itself, as tests key caches by Redis key.
func ident(s string) string { return s }

func recordN(r *Recorder[string], key string, n int) (crossings int) {
	for range n {
		if r.Record(key) {
			crossings++
		}
	}
	return crossings
}

func TestRecorderWindow(t *testing.T) {
	// Window 10s in ten 1s slots; "k" is read 100 times in the first slot.
	r := NewRecorder(testConfig(), epoch, ident)
	recordN(r, "k", 100)

	steps := []struct {
		name       string
		at         time.Duration
		qps, burst float64
	}{
		{"a partial slot is not in QPS yet, only in Burst", 0, 0, 100},
		{"a fresh window divides by its full length, not by time since start", 1 * time.Second, 10, 100},
		{"the slot stays in the window for ten slots", 10 * time.Second, 10, 0},
		{"and leaves it after", 11 * time.Second, 0, 0},
	}
	for _, s := range steps {
		r.Advance(epoch.Add(s.at))
		got := r.Rate("k")
		if got.QPS != s.qps || got.Burst != s.burst {
			t.Errorf("%s: at %v got QPS %v Burst %v, want %v %v", s.name, s.at, got.QPS, got.Burst, s.qps, s.burst)
		}
	}
}

func TestRecorderWindowSlides(t *testing.T) {
	// 10 reads in every slot for 30 slots: a steady 10 QPS once the window
	// is full, never more.
	r := NewRecorder(testConfig(), epoch, ident)
	for s := range 30 {
		r.Advance(epoch.Add(time.Duration(s) * time.Second))
		if got := r.Rate("k").QPS; got > 10 {
			t.Fatalf("slot %d: QPS %v exceeds the offered 10", s, got)
		}
		recordN(r, "k", 10)
	}
	r.Advance(epoch.Add(30 * time.Second))
	if got := r.Rate("k").QPS; got != 10 {
		t.Fatalf("steady state QPS = %v, want 10", got)
	}
}

func TestRecorderJumpClearsEverything(t *testing.T) {
	r := NewRecorder(testConfig(), epoch, ident)
	recordN(r, "k", 50)
	r.Advance(epoch.Add(time.Hour / 60)) // 60 slots later: all cells are stale
	if got := r.Rate("k"); got.QPS != 0 || got.Burst != 0 {
		t.Fatalf("after a jump beyond the window got %+v, want zero", got)
	}
}

func TestRecorderBurstCrossingOncePerStep(t *testing.T) {
	// hot_qps 10 with 1s slots: the 10th access of a slot crosses, then
	// the 20th, 40th, 80th and 160th, and no more.
	r := NewRecorder(testConfig(WithHotQPS(10), WithWarmQPS(1)), epoch, ident)
	if n := recordN(r, "k", 25); n != 2 {
		t.Fatalf("crossings in 25 accesses = %d, want 2 (10th and 20th)", n)
	}
	if n := recordN(r, "k", 1000); n != 3 {
		t.Fatalf("crossings in the next 1,000 = %d, want 3 (40th, 80th, 160th)", n)
	}
	r.Advance(epoch.Add(time.Second))
	if n := recordN(r, "k", 9); n != 0 {
		t.Fatalf("9 accesses crossed %d times, want 0", n)
	}
	if n := recordN(r, "k", 1); n != 1 {
		t.Fatalf("10th access in slot 1 crossed %d times, want 1", n)
	}
}

func TestRecorderForgetsIdleKeys(t *testing.T) {
	r := NewRecorder(testConfig(WithInactiveAfter(30*time.Second)), epoch, ident)
	recordN(r, "idle", 1)
	r.Advance(epoch.Add(20 * time.Second))
	recordN(r, "busy", 1)
	r.Advance(epoch.Add(31 * time.Second))
	if r.Rate("idle") != (KeyRate[string]{Key: "idle", Name: "idle"}) || r.Len() != 1 {
		t.Fatalf("idle key kept: len %d", r.Len())
	}
	r.Advance(epoch.Add(51 * time.Second))
	if r.Len() != 0 {
		t.Fatalf("len %d after both keys idled, want 0", r.Len())
	}
}

func TestRecorderCapUnderMillionDistinctKeys(t *testing.T) {
	const size = 1000
	r := NewRecorder(testConfig(WithRecorderSize(size), WithTopN(1), WithLocalSize(1)), epoch, ident)
	// A few keys read often must survive a flood of one-off keys.
	for i := range 1_000_000 {
		if i%1000 == 0 {
			r.Advance(epoch.Add(time.Duration(i/100_000) * time.Second))
			for k := range 5 {
				recordN(r, "regular:"+strconv.Itoa(k), 20)
			}
		}
		r.Record("flood:" + strconv.Itoa(i))
		if r.Len() > size {
			t.Fatalf("after %d keys the recorder tracks %d, above its cap %d", i+1, r.Len(), size)
		}
	}
	if r.Refused() == 0 {
		t.Fatal("a full recorder refused nothing")
	}
	for k := range 5 {
		if got := r.Rate("regular:" + strconv.Itoa(k)); got.QPS == 0 && got.Burst == 0 {
			t.Errorf("regular:%d was evicted by the flood", k)
		}
	}
}

func TestRecorderEvictsLeastAccessed(t *testing.T) {
	r := NewRecorder(testConfig(WithRecorderSize(10), WithTopN(1), WithLocalSize(1)), epoch, ident)
	for i := range 10 {
		recordN(r, "k"+strconv.Itoa(i), i+1) // k0 least accessed
	}
	r.Record("new") // refused: full
	r.Advance(epoch.Add(time.Second))
	if r.Len() != 9 || r.Rate("k0").Burst != 0 || r.Rate("k1").Burst == 0 {
		t.Fatalf("after eviction len=%d k0=%+v k1=%+v; want k0 alone evicted", r.Len(), r.Rate("k0"), r.Rate("k1"))
	}
	r.Record("new")
	if r.Rate("new").Burst == 0 {
		t.Fatal("a newcomer is refused after eviction made room")
	}
}

func TestRecorderDistinctPerSec(t *testing.T) {
	r := NewRecorder(testConfig(), epoch, ident)
	for i := range 7 {
		recordN(r, "k"+strconv.Itoa(i), 3)
	}
	r.Advance(epoch.Add(time.Second))
	if got := r.DistinctPerSec(); got != 7 {
		t.Fatalf("DistinctPerSec = %v, want 7", got)
	}
	r.Advance(epoch.Add(2 * time.Second))
	if got := r.DistinctPerSec(); got != 0 {
		t.Fatalf("DistinctPerSec of an idle slot = %v, want 0", got)
	}
}

func TestRecordSampledWeighsWhatItCounts(t *testing.T) {
	// hot_qps 100 with 1s slots: the burst mark is 100 accesses.
	r := NewRecorder(testConfig(WithHotQPS(100), WithWarmQPS(1)), epoch, ident)
	recordN(r, "k", 90)
	for rnd := range uint32(1 << 10) {
		r.RecordSampled("k", rnd<<22) // high bits 0 only for rnd < 64: 64 samples of 16
	}
	if got := r.Rate("k").Burst; got != 90+64*16 {
		t.Fatalf("Burst = %v, want %v", got, 90+64*16)
	}
	// A weighted add that jumps over the mark still reports the crossing.
	r2 := NewRecorder(testConfig(WithHotQPS(100), WithWarmQPS(1)), epoch, ident)
	recordN(r2, "k", 90)
	if !r2.add("k", 16) {
		t.Fatal("jumping from 90 to 106 did not report crossing 100")
	}
	if r2.add("k", 16) {
		t.Fatal("crossing reported twice in one slot")
	}
}
