package detect

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testConfig is the runtime's defaults, changed by opts.
func testConfig(opts ...func(*Params)) Params {
	p := Params{Window: 10 * time.Second, HotQPS: 3000, WarmQPS: 500, RecorderSize: 1024, InactiveAfter: 300 * time.Second}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func withHotQPS(v float64) func(*Params)              { return func(p *Params) { p.HotQPS = v } }
func withWarmQPS(v float64) func(*Params)             { return func(p *Params) { p.WarmQPS = v } }
func withRecorderSize(n int) func(*Params)            { return func(p *Params) { p.RecorderSize = n } }
func withInactiveAfter(d time.Duration) func(*Params) { return func(p *Params) { p.InactiveAfter = d } }

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
		{"the slot stays in the window for ten Slots", 10 * time.Second, 10, 0},
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
	r := NewRecorder(testConfig(withHotQPS(10), withWarmQPS(1)), epoch, ident)
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
	r := NewRecorder(testConfig(withInactiveAfter(30*time.Second), withHotQPS(1), withWarmQPS(1)), epoch, ident)
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

func TestRecorderCapUnderAFloodOfDistinctKeys(t *testing.T) {
	const size = 1000
	r := NewRecorder(testConfig(withRecorderSize(size), withHotQPS(10), withWarmQPS(4)), epoch, ident)
	// A few keys read often must survive a flood of one-off keys, and the
	// table of candidates never grows past its size.
	for i := range 300_000 { // three slots of 100,000 distinct keys
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
	for k := range 5 {
		if got := r.Rate("regular:" + strconv.Itoa(k)); got.QPS < 100 {
			t.Errorf("regular:%d measured at %+v, want at least its 200 reads a second over the window", k, got)
		}
	}
	// The sketch may overstate a key by what other keys put in its cells:
	// here 100,000 distinct keys a slot, far more than a hot key's rate
	// leaves room for, and still a small fraction of the regulars' rate.
	if got := r.Rate("flood:299999"); got.Score() > 20 {
		t.Errorf("a key read once measures %+v", got)
	}
}

// A full table takes a newcomer that reaches the hot rate: the weakest
// quarter goes, and comes back with its history if it is read again.
func TestRecorderEvictsLeastAccessed(t *testing.T) {
	r := NewRecorder(testConfig(withRecorderSize(8), withHotQPS(2), withWarmQPS(2)), epoch, ident)
	for i := range 8 {
		recordN(r, "k"+strconv.Itoa(i), i+1) // k0 least accessed
	}
	if r.Len() != 8 {
		t.Fatalf("len %d, want the 8 keys as candidates", r.Len())
	}
	recordN(r, "new", 1)
	if _, ok := r.cands.Load("new"); ok {
		t.Fatal("a newcomer read once displaced a busier key")
	}
	recordN(r, "new", 1)
	if _, ok := r.cands.Load("new"); !ok {
		t.Fatal("a newcomer at the hot rate was refused by a full table")
	}
	for _, gone := range []string{"k0", "k1"} {
		if _, ok := r.cands.Load(gone); ok {
			t.Errorf("%s, among the weakest quarter, is still a candidate", gone)
		}
	}
	if got := r.Rate("k1").Burst; got != 2 {
		t.Fatalf("k1's rate after eviction is %v, want its 2 reads, kept by the sketch", got)
	}
	recordN(r, "k1", 1)
	if c, ok := r.cands.Load("k1"); !ok || c.(*candidate).counts[r.cur.Load()%Ring].Load() != 3 {
		t.Fatal("k1 admitted again lost its history")
	}
}

// A flash crowd is never turned away by a table full of busier keys: the
// access that makes it burst past the hot rate admits it and reports the
// crossing, so it is promoted at once.
func TestRecorderAdmitsACrowdIntoAFullTable(t *testing.T) {
	r := NewRecorder(testConfig(withRecorderSize(16), withHotQPS(3000), withWarmQPS(500)), epoch, ident)
	for s := range 10 {
		r.Advance(epoch.Add(time.Duration(s) * time.Second))
		for i := range 16 {
			recordN(r, "busy:"+strconv.Itoa(i), 2900) // just under the hot rate, all window long
		}
	}
	if r.Len() != 16 {
		t.Fatalf("len %d, want the 16 busy keys as candidates", r.Len())
	}
	if got := recordN(r, "crowd", 2999); got != 0 {
		t.Fatalf("crossing reported %d times before the hot rate", got)
	}
	if !r.Record("crowd") {
		t.Fatal("the access reaching the hot rate did not report the crossing")
	}
	if got := r.Rate("crowd").Burst; got != 3000 {
		t.Fatalf("crowd's Burst = %v, want 3000", got)
	}
}

// Detection holds a bounded number of bytes of key names, however long the
// keys: a long key is counted by hash, and only candidates keep names.
func TestRecorderBoundsNameBytes(t *testing.T) {
	r := NewRecorder(testConfig(withHotQPS(1), withWarmQPS(1)), epoch, ident)
	long := strings.Repeat("x", 1<<20)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 200 {
		r.Record(strconv.Itoa(i) + long[:len(long)-8]) // 200 distinct keys of about 1 MiB
		r.Record(strconv.Itoa(i) + long[:1000])        // and 200 of 1 KB, which fit
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	budget := int64(testConfig().RecorderSize) * (candidateCost + nameBudgetPerCandidate)
	if r.NameBytes() > budget {
		t.Fatalf("candidates cost %d bytes, above the budget of %d", r.NameBytes(), budget)
	}
	if r.TooLong() != 200 {
		t.Fatalf("TooLong = %d, want the 200 keys of 1 MiB", r.TooLong())
	}
	// The sketch and filter are allocated with the recorder, so what grew
	// is the candidates' names and entries.
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 2*budget {
		t.Fatalf("heap grew by %d bytes for 400 keys, want at most twice the name budget, %d", grew, 2*budget)
	}
	if got := r.Rate(strconv.Itoa(7) + long[:len(long)-8]).Burst; got != 1 {
		t.Fatalf("a long key is not counted: Burst %v", got)
	}
	runtime.KeepAlive(long)
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
	r := NewRecorder(testConfig(withHotQPS(100), withWarmQPS(1)), epoch, ident)
	recordN(r, "k", 90)
	for rnd := range uint32(1 << 10) {
		r.RecordSampled("k", rnd<<22) // high bits 0 only for rnd < 64: 64 samples of 16
	}
	if got := r.Rate("k").Burst; got != 90+64*16 {
		t.Fatalf("Burst = %v, want %v", got, 90+64*16)
	}
	// A weighted add that jumps over the mark still reports the crossing.
	r2 := NewRecorder(testConfig(withHotQPS(100), withWarmQPS(1)), epoch, ident)
	recordN(r2, "k", 90)
	if !r2.add("k", 16) {
		t.Fatal("jumping from 90 to 106 did not report crossing 100")
	}
	if r2.add("k", 16) {
		t.Fatal("crossing reported twice in one slot")
	}
}

// A hot rate no count can reach (a benchmark's way of keeping every key
// cold) is the largest count, not 0: a read of any key returns, and
// never reports a burst.
func TestAHotRateBeyondAnyCountIsTheLargestCount(t *testing.T) {
	r := NewRecorder(testConfig(withHotQPS(math.MaxFloat64/2), withWarmQPS(1)), epoch, ident)
	if r.burstCount != math.MaxUint32 {
		t.Fatalf("burst count %d, want %d", r.burstCount, uint32(math.MaxUint32))
	}
	for range 1000 {
		if r.add("k", 1) {
			t.Fatal("a burst reported at an unreachable rate")
		}
	}
}

func TestCrossed(t *testing.T) {
	for _, c := range []struct {
		prev, n, burst uint32
		want           bool
	}{
		{99, 100, 100, true},   // reaches the hot rate
		{100, 101, 100, false}, // past it
		{199, 200, 100, true},  // twice
		{399, 400, 100, true},
		{1599, 1600, 100, true}, // sixteen times, the last step
		{3199, 3200, 100, false},
		{0, 16, 10, true}, // a sampled add of 16 jumps over 10
		{math.MaxUint32 - 1, math.MaxUint32, 1 << 31, false},
	} {
		if got := crossed(c.prev, c.n, c.burst); got != c.want {
			t.Errorf("crossed(%d, %d, %d) = %v, want %v", c.prev, c.n, c.burst, got, c.want)
		}
	}
}
