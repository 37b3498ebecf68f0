package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// tenants own the demo's orders.
var tenants = []string{"acme", "globex", "initech"}

// repos are the demo's database and its two generated repositories.
type repos struct {
	db     *userstore.DB
	dbName string // what the page and the table call the database
	users  *userstore.UserRepo
	orders *userstore.OrderRepo

	queriesPerSec atomic.Uint64 // the database's, in the last second
	stop, stopped chan struct{} // of measure
}

// openRepos opens the database at dbURL (SQLite in memory when empty),
// adds users 0..users-1 and orders 1..orders of every tenant where they
// are missing, and opens the repositories over rdb, reading through it.
// Nothing is written to Redis up front: each row reaches Redis on its
// first read, and changed orders through the change buffer. The orders'
// Bloom filter is warmed with the table's keys, so reads of orders that
// never existed do not reach the database. Demotion is checked every 5 s
// instead of every minute, so keys a flash crowd left are seen cooling
// within seconds; orders, read less, get users' thresholds. opts are
// both repositories'.
func openRepos(ctx context.Context, rdb redis.UniversalClient, dbURL string, logger *slog.Logger, users, orders int, opts ...runtime.Option) (r *repos, err error) {
	r = &repos{dbName: "SQLite in memory", stop: make(chan struct{}), stopped: make(chan struct{})}
	if u, err := url.Parse(dbURL); err == nil && dbURL != "" {
		r.dbName = "PostgreSQL at " + u.Host + u.Path
	}
	if r.db, err = userstore.OpenDB(ctx, dbURL); err != nil {
		return nil, fmt.Errorf("DATABASE_URL (or -database), empty for SQLite in memory: %w", err)
	}
	defer func() {
		if err != nil {
			r.closeAll()
		}
	}()
	if err := r.db.Seed(ctx, seedUsers(users), seedOrders(orders)); err != nil {
		return nil, err
	}
	common := append([]runtime.Option{runtime.WithLogger(logger), runtime.WithDemoteEvery(5 * time.Second)}, opts...)
	if r.users, err = userstore.NewUserRepo(rdb, append(common, userstore.WithUserLoader(r.db.User))...); err != nil {
		return nil, err
	}
	if r.orders, err = userstore.NewOrderRepo(rdb, append(common, runtime.WithHotQPS(500), runtime.WithWarmQPS(100),
		userstore.WithOrderLoader(r.db.Order), userstore.WithOrdersLoader(r.db.Orders))...); err != nil {
		return nil, err
	}
	keys, err := r.db.OrderKeys(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.orders.WarmOrderBloom(ctx, slices.Values(keys)); err != nil {
		// The filter stays unready and lets every read through: slower,
		// never wrong.
		logger.Warn("demo: warming the orders' Bloom filter failed", "err", err)
	}
	go r.measure()
	return r, nil
}

func seedUsers(n int) []*userstore.User {
	users := make([]*userstore.User, n)
	for id := range users {
		s := strconv.Itoa(id)
		users[id] = &userstore.User{ID: int64(id), Name: "user " + s, Email: "u" + s + "@example.com"}
	}
	return users
}

func seedOrders(n int) []*userstore.Order {
	var orders []*userstore.Order
	for _, tenant := range tenants {
		for num := 1; num <= n; num++ {
			orders = append(orders, &userstore.Order{Tenant: tenant, Num: uint32(num),
				Items: []userstore.Item{{SKU: "sku-" + strconv.Itoa(num%17), Qty: 1}}, Total: 100 * int64(num)})
		}
	}
	return orders
}

// measure counts the database's queries once a second, as the runtime
// counts reads, until Close: the page and the table show the last
// second's.
func (r *repos) measure() {
	defer close(r.stopped)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := r.db.Queries()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		q := r.db.Queries()
		r.queriesPerSec.Store(q - last)
		last = q
	}
}

// readsPerSec is the reads the repositories served in the last second
// they measured.
func (r *repos) readsPerSec() float64 {
	reads := 0.0
	for _, s := range r.sources() {
		if h := s.History(); len(h) > 0 {
			reads += h[len(h)-1].Reads
		}
	}
	return reads
}

// sources are what the live page and the table show.
func (r *repos) sources() []livepage.Source {
	return []livepage.Source{r.users, r.orders}
}

func (r *repos) Close() {
	close(r.stop)
	<-r.stopped
	r.closeAll()
}

// closeAll closes what is open.
func (r *repos) closeAll() {
	if r.users != nil {
		r.users.Close()
	}
	if r.orders != nil {
		r.orders.Close()
	}
	r.db.Close()
}
