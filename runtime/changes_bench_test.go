package runtime

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
)

// benchRows is a batch loader whose rows are in memory: a sync's
// database at no cost.
func benchRows(_ context.Context, ks []string) (map[string]*benchUser, error) {
	out := make(map[string]*benchUser, len(ks))
	for _, k := range ks {
		out[k] = benchValue
	}
	return out, nil
}

// BenchmarkSync measures the sync worker's throughput against its batch
// size: b.N ids are marked changed, then synced by one worker (claim,
// batch load from memory, one pipeline of SETs, acknowledge) until the
// buffer is empty. ids/s is the figure; ns/op is per id.
func BenchmarkSync(b *testing.B) {
	for _, batch := range []int{10, 50, 100, 500, 2000} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			c, _ := benchCache(b, WithEntity("bench"), WithChanges(true), WithSyncBatch(batch), WithBatchLoader(benchRows))
			ctx := context.Background()
			ks := make([]string, b.N)
			for i := range ks {
				ks[i] = "user:" + strconv.Itoa(i)
			}
			if err := c.MarkChanged(ctx, ks...); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			synced := 0
			for synced < b.N {
				step, err := c.e.SyncOnce(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if step.Claimed == 0 {
					b.Fatalf("the buffer ran dry after %d of %d ids", synced, b.N)
				}
				synced += step.Synced
			}
			b.ReportMetric(float64(synced)/time.Since(start).Seconds(), "ids/s")
		})
	}
}

// BenchmarkSyncLeasedPaired alternates, on one server, a batch of 500
// ids synced under their keys' leases (rebuild_lock=on, the default: one
// pipeline takes the keys, one more writes the rows while the keys hold
// them) and the same batch synced with plain SETs (rebuild_lock=off, the
// code before), the marks made outside the timing, and reports the ratio
// of their times: what the leases cost a sync.
func BenchmarkSyncLeasedPaired(b *testing.B) {
	const batch = 500
	leased, rdb := benchCache(b, WithEntity("leased"), WithChanges(true), WithSyncBatch(batch), WithBatchLoader(benchRows))
	plain, err := New(rdb, Glue[string, benchUser]{Key: ident, Clone: cloneBenchUser}, withClock(fakeclock.New(epoch)), WithLogger(quiet),
		WithEntity("plain"), WithChanges(true), WithSyncBatch(batch), WithBatchLoader(benchRows), WithRebuildLock(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { plain.Close() })
	ctx := context.Background()
	ks := make([]string, batch)
	for i := range ks {
		ks[i] = "user:" + strconv.Itoa(i)
	}
	var took [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 2 {
			which := (i + j) % 2 // each goes first every other time
			c := []*Cache[string, benchUser]{leased, plain}[which]
			b.StopTimer()
			if err := c.MarkChanged(ctx, ks...); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start := time.Now()
			if step, err := c.e.SyncOnce(ctx); err != nil || step.Synced != batch {
				b.Fatalf("synced %d of %d: %v", step.Synced, batch, err)
			}
			took[which] += time.Since(start)
		}
	}
	b.ReportMetric(float64(took[0])/float64(took[1]), "x")
	b.ReportMetric(float64(took[0].Microseconds())/float64(b.N), "leased-µs/batch")
	b.ReportMetric(float64(took[1].Microseconds())/float64(b.N), "plain-µs/batch")
}

// BenchmarkBloomCheckPaired alternates a Bloom filter check of an id never
// added and a plain GET of a missing key on the same server, so machine
// noise hits both alike, and reports their ratio: what the filter adds to
// a read that misses Redis, against the GET every such read makes anyway.
func BenchmarkBloomCheckPaired(b *testing.B) {
	c, rdb := benchCache(b, WithEntity("bench"), WithBloom(true))
	ctx := context.Background()
	if _, err := c.WarmBloom(ctx, func(yield func(string) bool) {
		for i := range 100_000 {
			if !yield("user:" + strconv.Itoa(i)) {
				return
			}
		}
	}); err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "absent:" + strconv.Itoa(i)
	}
	check := func(i int) {
		if c.e.Bloom().MayHold(ctx, keys[i%len(keys)]) && c.e.Bloom().Stats().Errors > 0 {
			b.Fatal("a Bloom check failed")
		}
	}
	get := func(i int) {
		if err := rdb.Get(ctx, keys[i%len(keys)]).Err(); !errors.Is(err, redis.Nil) {
			b.Fatal(err)
		}
	}
	timed := func(f func(int), i int) time.Duration { t0 := time.Now(); f(i); return time.Since(t0) }
	var bloom, base time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			bloom += timed(check, i)
			base += timed(get, i)
		} else {
			base += timed(get, i)
			bloom += timed(check, i)
		}
	}
	b.ReportMetric(float64(bloom.Nanoseconds())/float64(b.N), "bloom-ns/op")
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "get-ns/op")
	b.ReportMetric(float64(bloom)/float64(base), "bloom/get")
}
