package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// change makes one random change to orders 1..n of the database, as the
// service's writes would: mostly a new total, sometimes a deletion or a
// new order. Each commits, then marks the order changed, so the change
// buffer carries it to Redis. It returns the order it changed.
func change(ctx context.Context, db *userstore.DB, orders *userstore.OrderRepo, rng *rand.Rand, n int) (userstore.OrderKey, error) {
	k := userstore.OrderKey{Tenant: tenants[rng.IntN(len(tenants))], Num: 1 + uint32(rng.IntN(n))}
	switch p := rng.Float64(); {
	case p < 0.1:
		o := &userstore.Order{Tenant: k.Tenant, Total: 100}
		err := db.AddOrder(ctx, orders, o)
		return userstore.OrderKey{Tenant: o.Tenant, Num: o.Num}, err
	case p < 0.2:
		return k, db.DeleteOrder(ctx, orders, k.Tenant, k.Num)
	default:
		return k, db.AddToOrder(ctx, orders, k.Tenant, k.Num, 1+int64(rng.IntN(500)))
	}
}

// streamChanges changes orders 1..n perSec times a second until ctx
// ends. A change that failed (Redis refused its mark while it is down,
// or the database the change) is marked again with the next change, as a
// binlog reader would, so no change is lost to an outage: a mark too many
// costs one sync.
func streamChanges(ctx context.Context, db *userstore.DB, orders *userstore.OrderRepo, n int, perSec float64) {
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
		if k, err := change(ctx, db, orders, rng, n); err != nil {
			unmarked = append(unmarked, k)
		}
		if len(unmarked) == 0 {
			continue
		}
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
