package runtime

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// ids returns n keys of the profile entity starting with prefix.
func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
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
		if n != 1 || !e.c.e.Bloom().MayHold(e.ctx, k) {
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
	if _, err := e.c.e.SyncOnce(e.ctx); err != nil {
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

// Each version of an entity has a Bloom filter of its own, as it has keys
// of its own: version 1's filter, warmed, turns a missing id away, while
// version 2's, never warmed, answers "maybe" and lets the read load.
func TestEachVersionHasABloomFilterOfItsOwn(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	var loads [3]atomic.Int64
	cache := func(version int) *Cache[string, profile] {
		g := profileGlue
		g.Version = version
		c, err := New(rdb, g, WithEntity("p"), WithBloom(true), WithBloomItems(1000), WithNullTTL(0), WithLogger(quiet),
			WithLoader(func(context.Context, string) (*profile, error) { loads[version].Add(1); return nil, ErrNotFound }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	v1, v2 := cache(1), cache(2)
	if _, err := v1.WarmBloom(ctx, func(yield func(string) bool) { yield("p:1") }); err != nil {
		t.Fatal(err)
	}
	for version, c := range map[int]*Cache[string, profile]{1: v1, 2: v2} {
		if _, err := c.Get(ctx, "p:absent"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("version %d: Get = %v, want ErrNotFound", version, err)
		}
	}
	if loads[1].Load() != 0 || loads[2].Load() != 1 {
		t.Errorf("loads: version 1 %d, version 2 %d; want 0, its filter warmed, and 1, its own filter unready", loads[1].Load(), loads[2].Load())
	}
}
