package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// orderTable stands in for the database's table of orders, which other
// programs change behind the service's back: the demo streams changes to
// it (updates, deletions, new orders) and marks each changed order, so
// the change buffer carries it to Redis.
type orderTable struct {
	mu   sync.Mutex
	rows map[userstore.OrderKey]*userstore.Order
	next uint32 // the next new order's number, in every tenant
}

// newOrderTable holds orders 1..n of every tenant.
func newOrderTable(n int) *orderTable {
	t := &orderTable{rows: map[userstore.OrderKey]*userstore.Order{}, next: uint32(n) + 1}
	for _, tenant := range tenants {
		for num := uint32(1); num <= uint32(n); num++ {
			t.rows[userstore.OrderKey{Tenant: tenant, Num: num}] = &userstore.Order{Tenant: tenant, Num: num,
				Items: []userstore.Item{{SKU: "sku-" + strconv.Itoa(int(num%17)), Qty: 1}}, Total: 100 * int64(num)}
		}
	}
	return t
}

// load is the single-row loader: the SELECT of one order.
func (t *orderTable) load(_ context.Context, tenant string, num uint32) (*userstore.Order, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.rows[userstore.OrderKey{Tenant: tenant, Num: num}]
	if o == nil {
		return nil, runtime.ErrNotFound
	}
	c := *o
	c.Items = slices.Clone(o.Items)
	return &c, nil
}

// loadMany is the batch loader the sync worker uses: one query for a
// batch of changed orders.
func (t *orderTable) loadMany(ctx context.Context, keys []userstore.OrderKey) (map[userstore.OrderKey]*userstore.Order, error) {
	out := make(map[userstore.OrderKey]*userstore.Order, len(keys))
	for _, k := range keys {
		if o, err := t.load(ctx, k.Tenant, k.Num); err == nil {
			out[k] = o
		}
	}
	return out, nil
}

// keys walks the table's primary keys, as warming the Bloom filter needs.
func (t *orderTable) keys() iter.Seq[userstore.OrderKey] {
	t.mu.Lock()
	keys := slices.Collect(func(yield func(userstore.OrderKey) bool) {
		for k := range t.rows {
			if !yield(k) {
				return
			}
		}
	})
	t.mu.Unlock()
	return slices.Values(keys)
}

// change applies one random change to the table and returns the order it
// changed: mostly a new total, sometimes a deletion or a new order.
func (t *orderTable) change(rng *rand.Rand) userstore.OrderKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	tenant := tenants[rng.IntN(len(tenants))]
	switch p := rng.Float64(); {
	case p < 0.1:
		k := userstore.OrderKey{Tenant: tenant, Num: t.next}
		t.next++
		t.rows[k] = &userstore.Order{Tenant: tenant, Num: k.Num, Total: 100}
		return k
	case p < 0.2:
		k := userstore.OrderKey{Tenant: tenant, Num: 1 + uint32(rng.IntN(int(t.next-1)))}
		delete(t.rows, k)
		return k
	default:
		k := userstore.OrderKey{Tenant: tenant, Num: 1 + uint32(rng.IntN(int(t.next-1)))}
		if o := t.rows[k]; o != nil {
			c := *o
			c.Total += 1 + int64(rng.IntN(500))
			t.rows[k] = &c
		}
		return k
	}
}

// streamChanges changes the table perSec times a second until ctx ends,
// marking each changed order, as a binlog reader would. Like one, it
// keeps the marks Redis refused (while it is down) and sends them again
// with the next change, so no change is lost to an outage.
func streamChanges(ctx context.Context, t *orderTable, orders *userstore.OrderRepo, perSec float64) {
	if perSec <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	tick := time.NewTicker(time.Duration(float64(time.Second) / perSec))
	defer tick.Stop()
	var unmarked []userstore.OrderKey
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		unmarked = append(unmarked, t.change(rng))
		// The change is made: its mark must go out even if ctx ends now,
		// or the cache would keep the old row until its TTL.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		err := orders.MarkOrderChanged(mctx, unmarked...)
		cancel()
		if err == nil {
			unmarked = unmarked[:0]
		} else if len(unmarked) > maxUnmarked {
			unmarked = unmarked[len(unmarked)-maxUnmarked:] // the oldest expire from the cache by their TTL
		}
	}
}

// maxUnmarked bounds the marks streamChanges keeps through an outage.
const maxUnmarked = 10_000

// printChanges writes a line on the orders' change buffer and Bloom
// filter.
func printChanges(w io.Writer, st runtime.Stats) {
	var b bytes.Buffer
	c, f := st.Changes, st.Bloom
	fmt.Fprintf(&b, "%-6s changes: %d synced (%.0f/s), %d waiting, oldest %s; Bloom filter: %d reads of missing orders turned away of %d checked\n\n",
		st.Entity, c.Synced, c.SyncedPerSec, c.Pending, c.OldestAge.Round(time.Millisecond), f.Absent, f.Checks)
	w.Write(b.Bytes())
}
