package runtime

import (
	"context"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Yiling-J/theine-go"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/paired"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// benchUser is the README's User: a flat struct, whose clone is one
// allocation.
type benchUser struct {
	ID    int64
	Name  string
	Email string
	Age   int
}

func cloneBenchUser(u *benchUser) *benchUser { c := *u; return &c }

var benchValue = &benchUser{ID: 42, Name: "Ada Lovelace", Email: "ada@example.com", Age: 36}

// benchCache returns a Cache on a private Redis holding benchValue at
// "user:42". The manual clock never ticks, so nothing changes while the
// benchmark runs.
func benchCache(b *testing.B, opts ...Option) (*Cache[string, benchUser], *redis.Client) {
	b.Helper()
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	base := []Option{withClock(fakeclock.New(epoch)), WithLogger(quiet)}
	c, err := New(rdb, Glue[string, benchUser]{Key: ident, Clone: cloneBenchUser}, append(base, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if err := c.Set(context.Background(), "user:42", benchValue); err != nil {
		b.Fatal(err)
	}
	return c, rdb
}

// hotBenchCache is benchCache with "user:42" hot and held locally, on
// the wall clock, as a service runs it: every local hit reads the clock
// its freshness check reads (see track.Stamps), and the invalidation
// session vouches for the copy as time passes.
func hotBenchCache(b *testing.B) *Cache[string, benchUser] {
	b.Helper()
	c, _ := benchCache(b, WithHotQPS(100), WithWarmQPS(10), withClock(config.Wall{}))
	for range 101 {
		if _, err := c.Get(context.Background(), "user:42"); err != nil {
			b.Fatal(err)
		}
	}
	if !holds(c.e, "user:42") {
		b.Fatal("user:42 is not held locally")
	}
	// Held is not yet served: the copy is served once a session vouches
	// for it. Read until a read is a local hit.
	deadline := time.Now().Add(10 * time.Second)
	for hits := c.Stats().Hits; c.Stats().Hits == hits; {
		if time.Now().After(deadline) {
			b.Fatal("user:42 held but not served locally after 10s")
		}
		if _, err := c.Get(context.Background(), "user:42"); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// theineBaseline is a raw theine cache holding the same value, closed when
// b ends.
func theineBaseline(b *testing.B) *theine.Cache[string, *benchUser] {
	b.Helper()
	tc, err := theine.NewBuilder[string, *benchUser](DefaultLocalSize).Build()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(tc.Close)
	tc.Set("user:42", benchValue, 1)
	return tc
}

// baselineGet is what a service does without hotkeygen: a go-redis GET and
// a msgpack Unmarshal.
func baselineGet(b *testing.B, rdb *redis.Client) {
	raw, err := rdb.Get(context.Background(), "user:42").Bytes()
	if err != nil {
		b.Fatal(err)
	}
	var u benchUser
	if err := msgpack.Unmarshal(raw, &u); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGetHot reads one hot key from every goroutine; it is served
// from the local store. Compare with BenchmarkTheineGet.
func BenchmarkGetHot(b *testing.B) {
	c := hotBenchCache(b)
	ctx := context.Background()
	before := c.Stats().Misses // the heating's
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Get(ctx, "user:42"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	// A session held up by the benchmark's goroutines stops vouching, and
	// a read meanwhile goes to Redis, as it must: a few may.
	if misses := c.Stats().Misses - before; misses > 1+uint64(b.N)/10_000 {
		b.Fatalf("%d misses of %d reads: the key was not served locally", misses, b.N)
	}
}

// BenchmarkTheineGet is the baseline of BenchmarkGetHot: a raw theine Get
// of the same value.
func BenchmarkTheineGet(b *testing.B) {
	tc := theineBaseline(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := tc.Get("user:42"); !ok {
				b.Error("miss")
				return
			}
		}
	})
}

// BenchmarkGetCold reads a cold key through Redis; compare with
// BenchmarkRedisGetBaseline.
func BenchmarkGetCold(b *testing.B) {
	c, _ := benchCache(b, WithHotQPS(math.MaxFloat64/2), WithWarmQPS(1))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Get(ctx, "user:42"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if st := c.Stats(); st.HotAccesses != 0 {
		b.Fatal("the cold key became hot")
	}
}

// BenchmarkRedisGetBaseline is a plain go-redis GET plus msgpack Unmarshal
// of the same value: what a service does without hotkeygen.
func BenchmarkRedisGetBaseline(b *testing.B) {
	_, rdb := benchCache(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		baselineGet(b, rdb)
	}
}

// BenchmarkGetColdPaired alternates one cold Get and one baseline GET plus
// Unmarshal per iteration on the same server, so machine noise hits both
// alike, and reports their ratio: the runtime's overhead on a cold read.
func BenchmarkGetColdPaired(b *testing.B) {
	c, rdb := benchCache(b, WithHotQPS(math.MaxFloat64/2), WithWarmQPS(1))
	ctx := context.Background()
	coldGet := func() {
		if _, err := c.Get(ctx, "user:42"); err != nil {
			b.Fatal(err)
		}
	}
	paired.Serial(b, "cold", coldGet, "baseline", func() { baselineGet(b, rdb) })
}

// floorSink is where one goroutine of BenchmarkHotFloorPaired keeps its
// copies: on the heap, as a caller's are, and its own, so the goroutines
// do not contend for one location as callers do not.
type floorSink struct{ u *benchUser }

// floorSinks publishes each goroutine's sink, so the copies escape.
var floorSinks sync.Map

// BenchmarkHotFloorPaired measures, as BenchmarkGetHotPaired does, the
// least a hot read that keeps its promises can cost against a raw theine
// Get, and what each of its two parts costs alone: one reading of the
// monotonic clock (the freshness check's, see track.Stamps) and the
// caller's own copy on the heap.
func BenchmarkHotFloorPaired(b *testing.B) {
	for _, part := range []struct {
		name         string
		clock, clone bool
	}{
		{"clock", true, false},
		{"copy", false, true},
		{"clock+copy", true, true},
	} {
		b.Run(part.name, func(b *testing.B) {
			tc := theineBaseline(b)
			var stamps track.Stamps
			var floor, raw atomic.Int64 // nanoseconds
			b.RunParallel(func(pb *testing.PB) {
				sink := new(floorSink)
				floorSinks.Store(sink, nil)
				var sum int64
				for {
					t0 := time.Now()
					for range 1000 {
						v, _ := tc.Get("user:42")
						sum += v.ID
						if part.clock {
							sum += stamps.Now()
						}
						if part.clone {
							sink.u = cloneBenchUser(v)
						}
					}
					t1 := time.Now()
					for range 1000 {
						v, _ := tc.Get("user:42")
						sum += v.ID
					}
					floor.Add(int64(t1.Sub(t0)))
					raw.Add(int64(time.Since(t1)))
					for range 2000 {
						if !pb.Next() {
							floorSinks.Store(sink, sum) // sum is used
							return
						}
					}
				}
			})
			b.ReportMetric(float64(floor.Load())/float64(raw.Load()), "floor/theine")
		})
	}
}

// BenchmarkGetHotPaired alternates batches of hot Gets and raw theine Gets
// of the same value on every goroutine, so machine noise hits both alike,
// and reports their ratio: what detection, sampling and the clone add to a
// local hit.
func BenchmarkGetHotPaired(b *testing.B) {
	c := hotBenchCache(b)
	ctx := context.Background()
	tc := theineBaseline(b)

	ratio := paired.Parallel(b, func() { c.Get(ctx, "user:42") }, func() { tc.Get("user:42") })
	b.ReportMetric(ratio, "hot/theine")
}

// BenchmarkMissLoadedPaired measures what the lease costs a read that
// misses and loads: the same miss (the key deleted before each, outside
// the timing) through a Cache that takes the key's lease (rebuild_lock=on,
// the default) and through one that writes back with SET NX (off),
// alternating on one server, as BenchmarkGetColdPaired pairs a cold read
// with its GET. The loader answers at once, so the figure is Redis's and
// the runtime's alone.
func BenchmarkMissLoadedPaired(b *testing.B) {
	load := func(context.Context, string) (*benchUser, error) { return cloneBenchUser(benchValue), nil }
	leased, rdb := benchCache(b, WithHotQPS(math.MaxFloat64/2), WithWarmQPS(1), WithLoader(load))
	plain, err := New(rdb, Glue[string, benchUser]{Key: ident, Clone: cloneBenchUser},
		withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(math.MaxFloat64/2), WithWarmQPS(1),
		WithLoader(load), WithRebuildLock(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { plain.Close() })
	ctx := context.Background()
	miss := func(c *Cache[string, benchUser]) time.Duration {
		if err := rdb.Del(ctx, "user:42").Err(); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := c.Get(ctx, "user:42"); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	withLease, without := alternate(b, func() time.Duration { return miss(leased) }, func() time.Duration { return miss(plain) })
	b.ReportMetric(float64(withLease.Nanoseconds())/float64(b.N), "lease-ns/op")
	b.ReportMetric(float64(without.Nanoseconds())/float64(b.N), "setnx-ns/op")
	b.ReportMetric(float64(withLease)/float64(without), "lease/setnx")
}

// BenchmarkSetPaired measures what deleting the row under the
// neighbouring versions costs a write (issue 50, item 3): Set through a
// Cache whose keys have a prefix, version 2, which deletes the key's row
// under versions 1 and 3 in the same round trip, and through one without
// a prefix, which has no neighbours (the code before), alternating on one
// server; both have a loader, as a Cache that deletes them must.
func BenchmarkSetPaired(b *testing.B) { pairedSets(b, redistest.Start(b).Client(b)) }

// BenchmarkHSetPaired is BenchmarkSetPaired for a collection: an HSet of
// one item by a collection at version 2 with a loader, which deletes the
// owner's hash under versions 1 and 3 in the same pipeline, against one
// with no neighbours, on one server, alternated.
func BenchmarkHSetPaired(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	load := WithCollectionLoader(func(context.Context, loginOwner) (map[string]*login, error) { return nil, nil })
	v2Glue := loginGlue
	v2Glue.Key = func(k loginOwner) string { return "login:v2:" + strings.TrimPrefix(k.String(), "login:") }
	v2Glue.Prefix, v2Glue.Version = "login:v2:", 2
	plainGlue := loginGlue
	plainGlue.Prefix = "" // no prefix: no neighbours
	cols := make([]*Collection[loginOwner, string, login], 2)
	for i, glue := range []CollectionGlue[loginOwner, string, login]{v2Glue, plainGlue} {
		c, err := NewCollection(rdb, glue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithTTL(time.Hour), load)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		cols[i] = c
	}
	ctx := context.Background()
	item := &login{User: 7, Platform: "ios", Token: "t1", Status: 1, ExpiresAt: epoch.Add(time.Hour)}
	hset := func(c *Collection[loginOwner, string, login]) time.Duration {
		t0 := time.Now()
		if err := c.HSet(ctx, item); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	pairedWrites(b, func() time.Duration { return hset(cols[0]) }, func() time.Duration { return hset(cols[1]) })
}

// BenchmarkSetPairedOnACluster is BenchmarkSetPaired on a cluster of
// three masters, where the neighbours' keys are in other slots: their
// DELs go to their own nodes, in parallel with the SET.
func BenchmarkSetPairedOnACluster(b *testing.B) {
	pairedSets(b, redistest.StartCluster(b, 3).Client(b))
}

// pairedSets alternates on rdb the Set of a Cache at version 2 with a
// loader and of one with no neighbours.
func pairedSets(b *testing.B, rdb redis.UniversalClient) {
	load := WithLoader(func(context.Context, string) (*benchUser, error) { return cloneBenchUser(benchValue), nil })
	caches := make([]*Cache[string, benchUser], 2)
	for i, glue := range []Glue[string, benchUser]{
		{Key: func(k string) string { return "user:v2:" + strings.TrimPrefix(k, "user:") }, Clone: cloneBenchUser, Prefix: "user:v2:", Version: 2},
		{Key: ident, Clone: cloneBenchUser}, // no prefix: no neighbours
	} {
		c, err := New(rdb, glue, withClock(fakeclock.New(epoch)), WithLogger(quiet), load)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		caches[i] = c
	}
	ctx := context.Background()
	set := func(c *Cache[string, benchUser]) time.Duration {
		t0 := time.Now()
		if err := c.Set(ctx, "user:42", benchValue); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	pairedWrites(b, func() time.Duration { return set(caches[0]) }, func() time.Duration { return set(caches[1]) })
}
