package userstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// Users are read through the database once, then from Redis and memory;
// a write updates the row, then deletes the key, and every replica reads
// the new row.
func TestUsersReadThroughTheDatabase(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *userstore.DB) {
		ctx := context.Background()
		ada := &userstore.User{ID: 1, Name: "Ada", Email: "ada@example.com", Tags: []string{"admin"}}
		if err := db.Seed(ctx, []*userstore.User{ada, {ID: 2, Name: "Edsger"}}, nil); err != nil {
			t.Fatal(err)
		}
		srv := redistest.Start(t)
		newRepo := func() *userstore.UserRepo {
			r := userstore.MustNewUserRepo(srv.Client(t), runtime.WithHotQPS(50), runtime.WithWarmQPS(10), userstore.WithUserLoader(db.User))
			t.Cleanup(func() { r.Close() })
			return r
		}
		a, b := newRepo(), newRepo()

		for _, c := range []struct {
			name    string
			id      int64
			want    *userstore.User
			queries uint64
		}{
			{"a row, 100 times from each replica: hot, one load", 1, ada, 1},
			{"an absent row, 100 times: remembered absent, one load", 404, nil, 1},
		} {
			q := queriesOf(t, db, func() {
				for range 100 {
					for _, r := range []*userstore.UserRepo{a, b} {
						got, err := r.GetUser(ctx, c.id)
						if c.want == nil && !errors.Is(err, runtime.ErrNotFound) || c.want != nil && (err != nil || !reflect.DeepEqual(got, c.want)) {
							t.Fatalf("%s: GetUser(%d) = %+v, %v; want %+v", c.name, c.id, got, err, c.want)
						}
					}
				}
			})
			if q != c.queries {
				t.Errorf("%s: %d database queries, want %d", c.name, q, c.queries)
			}
		}
		if !slices.ContainsFunc(b.Stats().HotKeys, func(k runtime.HotKey) bool { return k.Key == "user:1" }) {
			t.Fatalf("user:1 is not hot on b: %+v", b.Stats().HotKeys)
		}

		lovelace := &userstore.User{ID: 1, Name: "Ada Lovelace", Email: "ada@example.com"}
		if err := db.SaveUser(ctx, a, lovelace); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*userstore.UserRepo{"a, which wrote": a, "b, another replica": b} {
			redistest.WaitFor(t, name+" to read the new row", func() bool {
				got, err := r.GetUser(ctx, 1)
				return err == nil && reflect.DeepEqual(got, lovelace)
			})
		}
		if got, err := db.User(ctx, 1); err != nil || !reflect.DeepEqual(got, lovelace) {
			t.Fatalf("the database holds %+v, %v; want %+v", got, err, lovelace)
		}
	})
}

// Orders change in the database in transactions, each marked after it
// commits: the change buffer brings every change to Redis, new orders
// included, and the Bloom filter, warmed with the table's keys, keeps
// reads of orders that never existed away from the database.
func TestOrdersFollowTheDatabaseThroughTheChangeBuffer(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *userstore.DB) {
		ctx := context.Background()
		var seed []*userstore.Order
		for num := range uint32(3) {
			seed = append(seed, &userstore.Order{Tenant: "acme", Num: num + 1, Items: []userstore.Item{{SKU: "bolt", Qty: 2}}, Total: 100})
		}
		if err := db.Seed(ctx, nil, seed); err != nil {
			t.Fatal(err)
		}
		orders := userstore.MustNewOrderRepo(redistest.Start(t).Client(t), runtime.WithSyncEvery(20*time.Millisecond),
			userstore.WithOrderLoader(db.Order), userstore.WithOrdersLoader(db.Orders))
		t.Cleanup(func() { orders.Close() })
		keys, err := db.OrderKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := orders.WarmOrderBloom(ctx, slices.Values(keys)); err != nil || n != 3 {
			t.Fatalf("WarmOrderBloom added %d keys, %v; want the table's 3", n, err)
		}
		total := func(num uint32) (int64, error) {
			o, err := orders.GetOrder(ctx, "acme", num)
			if err != nil {
				return 0, err
			}
			return o.Total, nil
		}
		if q := queriesOf(t, db, func() {
			for range 10 {
				if got, err := total(1); got != 100 || err != nil {
					t.Fatalf("order acme:1 reads %d, %v; want 100", got, err)
				}
				if _, err := total(99); !errors.Is(err, runtime.ErrNotFound) {
					t.Fatalf("order acme:99, which never existed, reads %v; want ErrNotFound", err)
				}
			}
		}); q != 1 {
			t.Errorf("10 reads of a row and 10 of an order that never existed made %d database queries, want 1", q)
		}

		added := &userstore.Order{Tenant: "acme", Total: 700}
		for _, c := range []struct {
			change func() error
			num    uint32
			want   int64 // -1: deleted
		}{
			{func() error { return db.AddToOrder(ctx, orders, "acme", 1, 50) }, 1, 150},
			{func() error { return db.DeleteOrder(ctx, orders, "acme", 2) }, 2, -1},
			{func() error { return db.AddOrder(ctx, orders, added) }, 4, 700},
		} {
			if err := c.change(); err != nil {
				t.Fatal(err)
			}
			redistest.WaitFor(t, fmt.Sprintf("the change of order acme:%d to reach Redis", c.num), func() bool {
				got, err := total(c.num)
				return c.want < 0 && errors.Is(err, runtime.ErrNotFound) || err == nil && got == c.want
			})
		}
		if added.Num != 4 {
			t.Errorf("AddOrder gave the new order number %d, want the tenant's next, 4", added.Num)
		}
	})
}

func TestOpenDBSaysWhichURLs(t *testing.T) {
	_, err := userstore.OpenDB(context.Background(), "mysql://db/users")
	if err == nil || !strings.Contains(err.Error(), "want a postgres:// URL, or none for SQLite") {
		t.Fatalf("OpenDB of a MySQL URL: %v; want an error naming what it takes", err)
	}
}
