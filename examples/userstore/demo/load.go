package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// load is the demo's read traffic: users drawn from a Zipf distribution,
// so a few are read far more than the rest, plus a flash crowd, a few
// users picked at random who suddenly draw a large share of the reads,
// until the crowd moves on to others. Some reads are of orders instead.
type load struct {
	Users      int           // users 0..Users-1 are read
	Orders     int           // orders 1..Orders of every tenant are read
	Workers    int           // concurrent readers
	Rate       float64       // reads per second in all; 0 reads as fast as Redis answers
	Skew       float64       // Zipf exponent, above 1
	OrderShare float64       // share of reads that are of orders
	Crowd      int           // users in the flash crowd; 0 disables it
	CrowdShare float64       // share of user reads that go to the crowd
	CrowdEvery time.Duration // how often the crowd moves to new users
	Changes    float64       // order rows changed in the database per second, and marked
	Missing    float64       // share of order reads of orders that never existed
}

// run reads until ctx ends. moved, when not nil, is told each new crowd.
//
// Failed reads do not stop it: a service goes on taking requests when
// Redis fails, and the live page shows what that costs (stop Redis
// during the demo to see it). Hot keys are still answered from memory.
func (l load) run(ctx context.Context, r *repos, moved func(crowd []int64)) {
	var crowd atomic.Pointer[[]int64]
	move := func(rng *rand.Rand) {
		c := make([]int64, l.Crowd)
		for i := range c {
			// From the tail, so the crowd's users were cold before.
			c[i] = int64(min(l.Users-1, l.Users/50+rng.IntN(max(1, l.Users-l.Users/50))))
		}
		crowd.Store(&c)
		if moved != nil {
			moved(c)
		}
	}
	var wg sync.WaitGroup
	if l.Crowd > 0 {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		move(rng)
		wg.Go(func() {
			tick := time.NewTicker(l.CrowdEvery)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					move(rng)
				}
			}
		})
	}
	wg.Go(func() { streamChanges(ctx, r.db, r.orders, l.Orders, l.Changes) })
	for w := range l.Workers {
		wg.Go(func() { l.read(ctx, r, &crowd, uint64(w)) })
	}
	wg.Wait()
}

// read is one worker: it paces itself to its part of Rate in batches of
// 10 ms.
func (l load) read(ctx context.Context, r *repos, crowd *atomic.Pointer[[]int64], seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	users := rand.NewZipf(rng, l.Skew, 1, uint64(l.Users-1))
	orders := rand.NewZipf(rng, l.Skew, 1, uint64(len(tenants)*l.Orders-1))
	const batch = 10 * time.Millisecond
	perBatch := l.Rate / float64(l.Workers) * batch.Seconds()
	next, owed := time.Now(), 0.0
	for ctx.Err() == nil {
		n := 1
		if l.Rate > 0 {
			owed += perBatch
			n, owed = int(owed), owed-float64(int(owed))
			if next = next.Add(batch); time.Since(next) > time.Second {
				next = time.Now() // a slow Redis is not made up for in a burst
			}
			sleep(ctx, time.Until(next))
		}
		failed := false
		for range n {
			var err error
			switch p := rng.Float64(); {
			case p < l.OrderShare*l.Missing: // an order that never existed
				_, err = r.orders.GetOrder(ctx, tenants[rng.IntN(len(tenants))], uint32(10*l.Orders+rng.IntN(1<<30)))
			case p < l.OrderShare:
				o := int(orders.Uint64())
				_, err = r.orders.GetOrder(ctx, tenants[o%len(tenants)], uint32(o/len(tenants)+1))
			case p < l.OrderShare+(1-l.OrderShare)*l.CrowdShare && l.Crowd > 0:
				c := *crowd.Load()
				_, err = r.users.GetUser(ctx, c[rng.IntN(len(c))])
			default:
				_, err = r.users.GetUser(ctx, int64(users.Uint64()))
			}
			// Orders are deleted, or never were: absent is no failure.
			failed = failed || err != nil && !errors.Is(err, runtime.ErrNotFound)
		}
		if failed && l.Rate == 0 {
			sleep(ctx, batch) // unpaced, a failing Redis would make this spin
		}
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
