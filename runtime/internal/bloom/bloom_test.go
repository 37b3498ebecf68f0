package bloom

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// ids returns n ids starting with prefix.
func ids(prefix string, n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

// holds checks ids a thousand at a time, as a batch read does, and
// returns how many the filter says may exist.
func holds(ctx context.Context, f *Filter, ids []string) (n int) {
	for chunk := range slices.Chunk(ids, 1000) {
		for _, ok := range f.MayHoldMany(ctx, chunk) {
			if ok {
				n++
			}
		}
	}
	return n
}

// warmed is a filter of entity "e" sized for n ids at p on rdb, warmed
// with ids("p:", n).
func warmed(t *testing.T, rdb Client, n int, p float64) *Filter {
	t.Helper()
	f := New(rdb, "e", n, p)
	if added, err := f.Warm(context.Background(), slices.Values(ids("p:", n))); err != nil || added != n {
		t.Fatalf("Warm = %d, %v; want %d, nil", added, err, n)
	}
	return f
}

// TestFalsePositiveRate fills filters to the number of ids they are sized
// for and measures how many of as many again ids never added they let
// through: within 20% of the rate asked for, and never one added turned
// away.
func TestFalsePositiveRate(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, tt := range []struct {
		items int
		fp    float64
	}{
		{20_000, 0.01},
		{10_000, 0.05},
	} {
		t.Run(strconv.Itoa(tt.items)+"@"+strconv.FormatFloat(tt.fp, 'g', -1, 64), func(t *testing.T) {
			ctx := context.Background()
			f := warmed(t, rdb, tt.items, tt.fp)
			if n := holds(ctx, f, ids("p:", tt.items)); n != tt.items {
				t.Fatalf("%d of %d ids added read as absent", tt.items-n, tt.items)
			}
			// Enough probes for 1,000 false positives: the count's standard
			// deviation is then about 3% of it, so 20% is six of them.
			probes := ids("q:", int(1000/tt.fp))
			fps := holds(ctx, f, probes)
			rate := float64(fps) / float64(len(probes))
			t.Logf("%d ids at p=%v: %d of %d never added pass, %.4f%%; m=%d bits, k=%d", tt.items, tt.fp, fps, len(probes), 100*rate, f.bits*uint64(len(f.keys)), f.hashes)
			if math.Abs(rate-tt.fp) > 0.2*tt.fp {
				t.Errorf("false-positive rate %.5f, want within 20%% of %v", rate, tt.fp)
			}
			if st := f.Stats(); st.Errors != 0 || st.Unready != 0 {
				t.Errorf("Stats() = %+v: no check should fail or find the filter unready", st)
			}
		})
	}
}

// TestMaybeUntilWarmed: before Warm, and after the bits were lost, every
// check answers "maybe", counted as unready; a nil filter, and a check
// Redis fails, answer "maybe" too.
func TestMaybeUntilWarmed(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := New(rdb, "e", 1000, 0.01)
	if !f.MayHold(ctx, "q:1") || f.Stats() != (Stats{Checks: 1, Unready: 1}) {
		t.Fatalf("before Warm: MayHold = false or Stats() = %+v; want maybe, one unready check", f.Stats())
	}
	if _, err := f.Warm(ctx, slices.Values(ids("p:", 1000))); err != nil {
		t.Fatal(err)
	}
	if absent := 1000 - holds(ctx, f, ids("q:", 1000)); absent < 950 {
		t.Fatalf("after Warm only %d of 1000 ids never added read as absent", absent)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	unready := f.Stats().Unready
	if absent := 1000 - holds(ctx, f, ids("q:", 1000)); absent != 0 || f.Stats().Unready != unready+1000 {
		t.Fatalf("after FLUSHALL %d ids read as absent, %d checks unready; an empty filter must answer maybe to all 1000", absent, f.Stats().Unready-unready)
	}
	var none *Filter
	if !none.MayHold(ctx, "q:1") {
		t.Error("a nil filter must answer maybe")
	}
	gone, cancel := context.WithCancel(ctx) // every command fails at once
	cancel()
	errs := f.Stats().Errors
	if !f.MayHold(gone, "q:1") || f.Stats().Errors != errs+1 {
		t.Errorf("with every command failing: MayHold = false or errors %d → %d; want maybe, one error", errs, f.Stats().Errors)
	}
}

// TestAddedCountsFailures: an addition Redis refused is reported and
// counted; one without a filter (nil) never fails.
func TestAddedCountsFailures(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := New(rdb, "e", 1000, 0.01)
	shard, _ := f.locate("p:1")
	if err := rdb.RPush(ctx, shard, "not a bitmap").Err(); err != nil {
		t.Fatal(err)
	}
	pipe := rdb.Pipeline()
	op := f.AddTo(ctx, pipe, "p:1")
	_, _ = pipe.Exec(ctx)
	if err := f.Added(op); err == nil || f.Stats() != (Stats{Adds: 1, Errors: 1}) {
		t.Errorf("Added = %v, Stats() = %+v; want WRONGTYPE, one addition, one error", err, f.Stats())
	}
	if err := f.Added(nil); err != nil {
		t.Errorf("Added(nil) = %v", err)
	}
}

// TestSizes: the standard formulas, and shards of at most 8 MiB.
func TestSizes(t *testing.T) {
	for _, tt := range []struct {
		n          int
		p          float64
		m          uint64
		k, shards  int
		shardBytes uint64
	}{
		{1_000_000, 0.01, 9_585_059, 7, 1, 1_198_133},
		{100_000_000, 0.01, 958_505_838, 7, 15, 7_987_549},
		{1000, 0.5, 1443, 1, 1, 181},
	} {
		m, k := Size(tt.n, tt.p)
		f := New(nil, "e", tt.n, tt.p)
		if m != tt.m || k != tt.k || len(f.keys) != tt.shards || (f.bits+7)/8 != tt.shardBytes {
			t.Errorf("%d ids at %v: m=%d k=%d in %d shards of %d bytes; want m=%d k=%d, %d shards of %d bytes",
				tt.n, tt.p, m, k, len(f.keys), (f.bits+7)/8, tt.m, tt.k, tt.shards, tt.shardBytes)
		}
	}
}

// TestKeyNames: the shards' names are the Redis keys every deployed
// instance reads; they hold the entity, m and k, and the shard's number,
// in a hash tag of its own.
func TestKeyNames(t *testing.T) {
	if got, want := New(nil, "user", 1_000_000, 0.01).keys, []string{"hotkeygen:bloom:{user:9585059x7:0}"}; !slices.Equal(got, want) {
		t.Errorf("keys = %q, want %q", got, want)
	}
	if got := New(nil, "user", 100_000_000, 0.01).keys; len(got) != 15 || got[14] != "hotkeygen:bloom:{user:958505838x7:14}" {
		t.Errorf("keys = %q, want 15 ending in hotkeygen:bloom:{user:958505838x7:14}", got)
	}
}

// TestOnACluster: the filter's shards live on the cluster's nodes, and a
// check of each id is one command to one of them.
func TestOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := context.Background()
	f := warmed(t, cl.Client(t), 2000, 0.01)
	if n := holds(ctx, f, ids("p:", 2000)); n != 2000 {
		t.Fatalf("%d of 2000 ids added read as absent", 2000-n)
	}
	if absent := 2000 - holds(ctx, f, ids("q:", 2000)); absent < 1900 {
		t.Errorf("only %d of 2000 ids never added read as absent", absent)
	}
}

// TestWithoutBitfield: on a server without BITFIELD (the demo's embedded
// Redis), the filter uses GETBIT and SETBIT, with the same bits and the
// same answers.
func TestWithoutBitfield(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	f := warmed(t, rdb, 1000, 0.01)
	if f.mode.Load() != bitsEach {
		t.Fatalf("mode %d on a server without BITFIELD, want per-bit commands", f.mode.Load())
	}
	if n := holds(ctx, f, ids("p:", 1000)); n != 1000 {
		t.Fatalf("%d of 1000 ids added read as absent", 1000-n)
	}
	absent := 1000 - holds(ctx, f, ids("q:", 1000))
	if absent < 950 || f.Stats().Errors != 0 {
		t.Errorf("%d of 1000 ids never added read as absent, %d errors", absent, f.Stats().Errors)
	}
}
