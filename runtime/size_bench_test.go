package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Yiling-J/theine-go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
)

// page is a value hot keys often hold: a product page or a configuration,
// with slices and maps, whose copy grows with it.
type page struct {
	ID    int64
	Title string
	Tags  []string
	Attrs map[string]string
	Items []pageItem
}

type pageItem struct {
	SKU   string
	Price int64
	Notes []string
}

func clonePage(p *page) *page {
	c := *p
	c.Tags = slices.Clone(p.Tags)
	c.Attrs = maps.Clone(p.Attrs)
	c.Items = make([]pageItem, len(p.Items))
	for i, it := range p.Items {
		it.Notes = slices.Clone(it.Notes)
		c.Items[i] = it
	}
	return &c
}

// pageOf returns a page whose msgpack is about size bytes: a tenth of it
// in tags, a tenth in attributes, the rest in items.
func pageOf(size int) *page {
	p := &page{ID: 42, Title: "A product", Attrs: map[string]string{}}
	for i := 0; i < size/10/16; i++ {
		p.Tags = append(p.Tags, fmt.Sprintf("tag-%010d", i))
		p.Attrs["attr-"+strconv.Itoa(i)] = "value"
	}
	for size-encodedSize(p) > 48 {
		p.Items = append(p.Items, pageItem{SKU: fmt.Sprintf("sku-%08d", len(p.Items)), Price: 1999, Notes: []string{"in stock"}})
	}
	return p
}

func encodedSize(p *page) int {
	b, err := msgpack.Marshal(p)
	if err != nil {
		panic(err)
	}
	return len(b)
}

// BenchmarkGetHotBySize measures what a hot read costs as its value grows,
// against a raw theine Get of the same value, alternating batches of each
// on every goroutine as BenchmarkGetHotPaired does: Get, which returns the
// caller's own deep copy, and View, which lends the held value, as the
// theine Get returns the held pointer. Allocations are averaged over the
// three.
func BenchmarkGetHotBySize(b *testing.B) {
	for _, size := range []int{100, 1 << 10, 10 << 10, 100 << 10} {
		v := pageOf(size)
		b.Run(fmt.Sprintf("size=%dB", encodedSize(v)), func(b *testing.B) {
			srv := redistest.Start(b)
			c, err := New(srv.Client(b), Glue[string, page]{Key: ident, Clone: clonePage},
				WithHotQPS(100), WithWarmQPS(10), withClock(config.Wall{}), WithLogger(quiet), WithMaxValueBytes(1<<20))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			ctx := context.Background()
			if err := c.Set(ctx, "page:42", v); err != nil {
				b.Fatal(err)
			}
			for range 101 {
				if _, err := c.Get(ctx, "page:42"); err != nil {
					b.Fatal(err)
				}
			}
			if !holds(c.e, "page:42") {
				b.Fatal("page:42 is not held locally")
			}
			tc, err := theine.NewBuilder[string, *page](DefaultLocalSize).Build()
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(tc.Close)
			tc.Set("page:42", v, 1)

			const batch = 100
			var get, view, raw atomic.Int64 // nanoseconds, summed over the goroutines
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var sum int64
				lend := func(p *page) error { sum += p.ID; return nil }
				for {
					t0 := time.Now()
					for range batch {
						p, _ := c.Get(ctx, "page:42")
						sum += p.ID
					}
					t1 := time.Now()
					for range batch {
						_ = c.View(ctx, "page:42", lend)
					}
					t2 := time.Now()
					for range batch {
						p, _ := tc.Get("page:42")
						sum += p.ID
					}
					get.Add(int64(t1.Sub(t0)))
					view.Add(int64(t2.Sub(t1)))
					raw.Add(int64(time.Since(t2)))
					for range 3 * batch {
						if !pb.Next() {
							floorSinks.Store(&sum, sum) // sum is used
							return
						}
					}
				}
			})
			b.ReportMetric(float64(get.Load())/float64(raw.Load()), "get/theine")
			b.ReportMetric(float64(view.Load())/float64(raw.Load()), "view/theine")
		})
	}
}
