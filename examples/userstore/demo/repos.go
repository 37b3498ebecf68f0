package main

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// tenants own the demo's orders.
var tenants = []string{"acme", "globex", "initech"}

// repos are the demo's two generated repositories, and the table of
// orders behind the second.
type repos struct {
	users  *userstore.UserRepo
	orders *userstore.OrderRepo
	table  *orderTable
}

// openRepos opens the repositories over rdb. Users come from a loader
// standing in for a database of users 0..users-1, orders from a table of
// orders 1..orders of every tenant that changes as the demo runs, so
// nothing is written up front: each row reaches Redis on its first read,
// and changed orders through the change buffer. The orders' Bloom filter
// is warmed with the table's keys, so reads of orders that never existed
// do not reach the table. Demotion is checked every 5 s instead of every
// minute, so keys a flash crowd left are seen cooling within seconds;
// orders, read less, get users' thresholds.
func openRepos(rdb redis.UniversalClient, logger *slog.Logger, users, orders int) (*repos, error) {
	common := []runtime.Option{runtime.WithLogger(logger), runtime.WithDemoteEvery(5 * time.Second)}
	r := &repos{table: newOrderTable(orders)}
	var err error
	r.users, err = userstore.NewUserRepo(rdb, append(common, userstore.WithUserLoader(func(_ context.Context, id int64) (*userstore.User, error) {
		if id < 0 || id >= int64(users) {
			return nil, runtime.ErrNotFound
		}
		s := strconv.FormatInt(id, 10)
		return &userstore.User{ID: id, Name: "user " + s, Email: "u" + s + "@example.com"}, nil
	}))...)
	if err != nil {
		return nil, err
	}
	r.orders, err = userstore.NewOrderRepo(rdb, append(common, runtime.WithHotQPS(500), runtime.WithWarmQPS(100),
		userstore.WithOrderLoader(r.table.load), userstore.WithOrdersLoader(r.table.loadMany))...)
	if err != nil {
		r.users.Close()
		return nil, err
	}
	if _, err := r.orders.WarmOrderBloom(context.Background(), r.table.keys()); err != nil {
		// The filter stays unready and lets every read through: slower,
		// never wrong.
		logger.Warn("demo: warming the orders' Bloom filter failed", "err", err)
	}
	return r, nil
}

// sources are what the live page and the table show.
func (r *repos) sources() []livepage.Source {
	return []livepage.Source{r.users, r.orders}
}

func (r *repos) Close() {
	r.users.Close()
	r.orders.Close()
}
