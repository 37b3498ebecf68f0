package main

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// tenants own the demo's orders.
var tenants = []string{"acme", "globex", "initech"}

// repos are the demo's two generated repositories.
type repos struct {
	users  *userstore.UserRepo
	orders *userstore.OrderRepo
}

// openRepos opens the repositories over rdb. Rows come from loaders
// standing in for a database of users 0..users-1 and orders 1..orders of
// every tenant, so nothing is written up front: each row reaches Redis on
// its first read. Demotion is checked every 5 s instead of every minute,
// so keys a flash crowd left are seen cooling within seconds; orders, read
// less, get users' thresholds.
func openRepos(rdb redis.UniversalClient, logger *slog.Logger, users, orders int) *repos {
	common := []runtime.Option{runtime.WithLogger(logger), runtime.WithDemoteEvery(5 * time.Second)}
	return &repos{
		users: userstore.NewUserRepo(rdb, append(common, userstore.WithUserLoader(func(_ context.Context, id int64) (*userstore.User, error) {
			if id < 0 || id >= int64(users) {
				return nil, runtime.ErrNotFound
			}
			s := strconv.FormatInt(id, 10)
			return &userstore.User{ID: id, Name: "user " + s, Email: "u" + s + "@example.com"}, nil
		}))...),
		orders: userstore.NewOrderRepo(rdb, append(common, runtime.WithHotQPS(500), runtime.WithWarmQPS(100),
			userstore.WithOrderLoader(func(_ context.Context, tenant string, num uint32) (*userstore.Order, error) {
				if !slices.Contains(tenants, tenant) || num < 1 || num > uint32(orders) {
					return nil, runtime.ErrNotFound
				}
				return &userstore.Order{Tenant: tenant, Num: num, Items: []userstore.Item{{SKU: "sku-" + strconv.Itoa(int(num%17)), Qty: 1}}, Total: 100 * int64(num)}, nil
			}))...),
	}
}

// sources are what the live page and the table show.
func (r *repos) sources() []livepage.Source {
	return []livepage.Source{r.users, r.orders}
}

func (r *repos) Close() {
	r.users.Close()
	r.orders.Close()
}
