package runtime

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

// ids returns n keys of the profile entity starting with prefix.
func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// TestBloomFalsePositiveRate fills filters to the number of ids they are
// sized for and measures how many of as many again ids never added they
// let through: within 20% of bloom_fp, and never one added turned away.
func TestBloomFalsePositiveRate(t *testing.T) {
	for _, tt := range []struct {
		items int
		fp    float64
	}{
		{20_000, 0.01},
		{10_000, 0.05},
	} {
		t.Run(strconv.Itoa(tt.items)+"@"+strconv.FormatFloat(tt.fp, 'g', -1, 64), func(t *testing.T) {
			e := newEnv(t, WithBloom(true), WithBloomItems(tt.items), WithBloomFP(tt.fp))
			added := ids("p:", tt.items)
			if n, err := e.c.WarmBloom(e.ctx, slices.Values(added)); err != nil || n != tt.items {
				t.Fatalf("WarmBloom = %d, %v", n, err)
			}
			for i := 0; i < len(added); i += 1000 {
				for j, ok := range e.c.bloomMayHoldMany(e.ctx, added[i:min(i+1000, len(added))]) {
					if !ok {
						t.Fatalf("%s was added but the filter says it is absent", added[i+j])
					}
				}
			}
			// Enough probes for 1,000 false positives: the count's standard
			// deviation is then about 3% of it, so 20% is six of them.
			probes := ids("q:", int(1000/tt.fp))
			fps := 0
			for i := 0; i < len(probes); i += 1000 {
				for _, ok := range e.c.bloomMayHoldMany(e.ctx, probes[i:min(i+1000, len(probes))]) {
					if ok {
						fps++
					}
				}
			}
			rate := float64(fps) / float64(len(probes))
			t.Logf("%d ids at bloom_fp %v: %d of %d never added pass, %.4f%%; m=%d bits, k=%d", tt.items, tt.fp, fps, len(probes), 100*rate, e.c.bloom.bits*uint64(len(e.c.bloom.keys)), e.c.bloom.hashes)
			if math.Abs(rate-tt.fp) > 0.2*tt.fp {
				t.Errorf("false-positive rate %.5f, want within 20%% of %v", rate, tt.fp)
			}
			if st := e.c.Stats().Bloom; st.Errors != 0 || st.Unready != 0 {
				t.Errorf("Stats().Bloom = %+v: no check should fail or find the filter unready", st)
			}
		})
	}
}

// floodDB is a table of profiles that logs what its loaders were asked.
type floodDB struct {
	mu    sync.Mutex
	rows  map[string]*profile
	asked map[string]int
}

func (d *floodDB) one(_ context.Context, k string) (*profile, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked[k]++
	if r := d.rows[k]; r != nil {
		return cloneProfile(r), nil
	}
	return nil, ErrNotFound
}

func (d *floodDB) many(ctx context.Context, ks []string) (map[string]*profile, error) {
	out := map[string]*profile{}
	for _, k := range ks {
		if r, err := d.one(ctx, k); err == nil {
			out[k] = r
		}
	}
	return out, nil
}

// TestBloomStopsAFloodOfMissingIds reads 100,000 distinct ids the database
// never had, in batches and one by one: the loader sees only the false
// positives, and Redis gains a placeholder for those alone.
func TestBloomStopsAFloodOfMissingIds(t *testing.T) {
	db := &floodDB{rows: map[string]*profile{}, asked: map[string]int{}}
	for _, k := range ids("p:", 10_000) { // the filter full: its rate is 1%
		db.rows[k] = &profile{Name: k}
	}
	e := newEnv(t, WithBloom(true), WithBloomItems(10_000), WithBloomFP(0.01), WithLoader(db.one), WithBatchLoader(db.many))
	if _, err := e.c.WarmBloom(e.ctx, func(yield func(string) bool) {
		for k := range db.rows {
			if !yield(k) {
				return
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	before, err := e.raw.DBSize(e.ctx).Result()
	if err != nil {
		t.Fatal(err)
	}

	flood := ids("x:", 100_000)
	for i := 0; i < 90_000; i += 1000 { // GetMany, a batch at a time
		vs, err := e.c.GetMany(e.ctx, flood[i:i+1000])
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range vs {
			if v != nil {
				t.Fatalf("%s read as %+v; it was never in the database", flood[i+j], v)
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 8 { // Get, from eight goroutines
		wg.Go(func() {
			for i := 90_000 + g; i < len(flood); i += 8 {
				if _, err := e.c.Get(e.ctx, flood[i]); !errors.Is(err, ErrNotFound) {
					t.Errorf("Get(%s) = %v, want ErrNotFound", flood[i], err)
					return
				}
			}
		})
	}
	wg.Wait()

	st := e.c.Stats().Bloom
	passed := st.Checks - st.Absent
	if len(db.asked) != int(passed) || st.Checks != uint64(len(flood)) {
		t.Errorf("the loader was asked for %d ids; the filter checked %d and let %d through", len(db.asked), st.Checks, passed)
	}
	for k, n := range db.asked {
		if n != 1 || !e.c.bloomMayHold(e.ctx, k) {
			t.Errorf("%s was loaded %d times; it should be loaded once, and only as a false positive", k, n)
		}
	}
	if rate := float64(passed) / float64(len(flood)); rate > 1.2*0.01 {
		t.Errorf("%d of %d missing ids reached the loader (%.3f%%), more than the filter's 1%% allows", passed, len(flood), 100*rate)
	}
	after, err := e.raw.DBSize(e.ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if after-before != int64(len(db.asked)) {
		t.Errorf("Redis gained %d keys; want %d, the placeholders of the false positives alone", after-before, len(db.asked))
	}
	t.Logf("100,000 missing ids: %d reached the loader, %d placeholders written", len(db.asked), after-before)
}

// TestBloomAnswersOnlyOnceWarmed: before WarmBloom, and after its bits
// were lost, the filter lets every read through to the loader; ids written
// through the repository or synced from the change buffer stay readable
// after their value expired.
func TestBloomAnswersOnlyOnceWarmed(t *testing.T) {
	db := &floodDB{rows: map[string]*profile{"p:1": {Name: "one"}}, asked: map[string]int{}}
	e := newEnv(t, WithBloom(true), WithBloomItems(1000), WithLoader(db.one), WithNullTTL(0),
		WithChanges(true), WithBatchLoader(db.many))
	absentLoads := func(key string) int {
		t.Helper()
		before := db.asked[key]
		if _, err := e.c.Get(e.ctx, key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%s) = %v, want ErrNotFound", key, err)
		}
		return db.asked[key] - before
	}
	if absentLoads("p:404") != 1 {
		t.Fatal("before WarmBloom a read of a missing id must reach the loader")
	}
	if _, err := e.c.WarmBloom(e.ctx, slices.Values([]string{"p:1"})); err != nil {
		t.Fatal(err)
	}
	if absentLoads("p:404") != 0 {
		t.Fatal("after WarmBloom a read of a missing id must not reach the loader")
	}

	if err := e.c.Set(e.ctx, "p:2", &profile{Name: "two"}); err != nil {
		t.Fatal(err)
	}
	db.rows["p:2"] = &profile{Name: "two"}
	db.rows["p:3"] = &profile{Name: "three"}              // created behind the repository's back…
	if err := e.c.MarkChanged(e.ctx, "p:3"); err != nil { // …and marked
		t.Fatal(err)
	}
	if _, err := e.c.syncOnce(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.raw.Del(e.ctx, "p:1", "p:2", "p:3") // as if they expired
	for _, k := range []string{"p:1", "p:2", "p:3"} {
		if v, err := e.c.Get(e.ctx, k); err != nil || v.Name != db.rows[k].Name {
			t.Errorf("Get(%s) after its value expired = %+v, %v; want the row, loaded", k, v, err)
		}
	}

	if err := e.raw.FlushAll(e.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if absentLoads("p:404") != 1 {
		t.Fatal("after the filter's bits were lost a read of a missing id must reach the loader")
	}
	if st := e.c.Stats().Bloom; st.Unready != 2 || st.Absent != 1 {
		t.Errorf("Stats().Bloom = %+v; want 2 checks of an unready filter, 1 turned away", st)
	}
}

// TestBloomSizes: the standard formulas, and shards of at most 8 MiB.
func TestBloomSizes(t *testing.T) {
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
		m, k := bloomSize(tt.n, tt.p)
		f := newBloomFilter("e", tt.n, tt.p)
		if m != tt.m || k != tt.k || len(f.keys) != tt.shards || (f.bits+7)/8 != tt.shardBytes {
			t.Errorf("%d ids at %v: m=%d k=%d in %d shards of %d bytes; want m=%d k=%d, %d shards of %d bytes",
				tt.n, tt.p, m, k, len(f.keys), (f.bits+7)/8, tt.m, tt.k, tt.shards, tt.shardBytes)
		}
	}
}

// TestBloomOnACluster: the filter's shards live on the cluster's nodes,
// and a check of each id is one command to one of them.
func TestBloomOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c, err := New(cl.Client(t), profileGlue, WithEntity("profile"), WithLogger(quiet), WithInvalidate(InvalidateOff),
		WithBloom(true), WithBloomItems(2000), WithBloomFP(0.01))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.WarmBloom(ctx, slices.Values(ids("p:", 2000))); err != nil {
		t.Fatal(err)
	}
	for i, ok := range c.bloomMayHoldMany(ctx, ids("p:", 2000)) {
		if !ok {
			t.Fatalf("p:%d was added but reads as absent", i)
		}
	}
	absent := 0
	for _, ok := range c.bloomMayHoldMany(ctx, ids("q:", 2000)) {
		if !ok {
			absent++
		}
	}
	if absent < 1900 {
		t.Errorf("only %d of 2000 ids never added read as absent", absent)
	}
}

// TestBloomWithoutBitfield: on a server without BITFIELD (the demo's
// embedded Redis), the filter uses GETBIT and SETBIT, with the same bits
// and the same answers.
func TestBloomWithoutBitfield(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	c, err := New(rdb, profileGlue, WithEntity("profile"), WithLogger(quiet), WithInvalidate(InvalidateOff),
		WithBloom(true), WithBloomItems(1000))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.WarmBloom(ctx, slices.Values(ids("p:", 1000))); err != nil {
		t.Fatal(err)
	}
	if c.bloom.mode.Load() != bitsEach {
		t.Fatalf("mode %d on a server without BITFIELD, want per-bit commands", c.bloom.mode.Load())
	}
	for i, ok := range c.bloomMayHoldMany(ctx, ids("p:", 1000)) {
		if !ok {
			t.Fatalf("p:%d was added but reads as absent", i)
		}
	}
	absent := 0
	for _, ok := range c.bloomMayHoldMany(ctx, ids("q:", 1000)) {
		if !ok {
			absent++
		}
	}
	if absent < 950 || c.Stats().Bloom.Errors != 0 {
		t.Errorf("%d of 1000 ids never added read as absent, %d errors", absent, c.Stats().Bloom.Errors)
	}
}
