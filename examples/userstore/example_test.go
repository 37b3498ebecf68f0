package userstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// redisAddr is the address of the redis-server the examples run against,
// started by TestMain: in a service it is wherever Redis runs.
var redisAddr string

func TestMain(m *testing.M) { os.Exit(redistest.RunWithServer(&redisAddr, m.Run)) }

// A repository over any go-redis client: writes go to Redis, reads come
// from Redis until a key is read hot_qps times a second, and from memory
// after that.
func ExampleNewUserRepo() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()
	users, err := userstore.NewUserRepo(rdb)
	if err != nil { // contradicting options, or a client the invalidation cannot use
		fmt.Println(err)
		return
	}
	defer users.Close() // stops the repository's background work

	if err := users.SetUser(ctx, &userstore.User{ID: 7, Name: "Ada"}); err != nil {
		fmt.Println(err)
		return
	}
	u, err := users.GetUser(ctx, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Name)

	// A burst of reads: user:7 passes hot_qps (500 reads/s) and is
	// served from memory.
	for range 2000 {
		if _, err := users.GetUser(ctx, 7); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, k := range users.Stats().HotKeys {
		fmt.Println("hot:", k.Key)
	}

	_, err = users.GetUser(ctx, 8)
	fmt.Println(errors.Is(err, runtime.ErrNotFound))
	// Output:
	// Ada
	// hot: user:7
	// true
}

// A loader makes the repository cache-aside: a key missing from Redis is
// loaded from the source of truth once, however many callers ask at once,
// written to Redis and returned. An absent row is remembered for null_ttl,
// so repeated reads of it do not reach the database.
func ExampleWithUserLoader() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()

	db := map[int64]*userstore.User{42: {ID: 42, Name: "Grace"}} // a stand-in for the database
	queries := 0
	load := func(ctx context.Context, id int64) (*userstore.User, error) {
		queries++
		if u, ok := db[id]; ok {
			return u, nil
		}
		return nil, fmt.Errorf("user %d: %w", id, runtime.ErrNotFound)
	}
	users, err := userstore.NewUserRepo(rdb, userstore.WithUserLoader(load))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer users.Close()

	for range 3 {
		u, err := users.GetUser(ctx, 42)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(u.Name)
	}
	for range 3 {
		_, err := users.GetUser(ctx, 404)
		fmt.Println(errors.Is(err, runtime.ErrNotFound))
	}
	fmt.Println("database queries:", queries)
	// Output:
	// Grace
	// Grace
	// Grace
	// true
	// true
	// true
	// database queries: 2
}

// GetUsers reads many keys in one round trip per Redis node (per hash slot
// on a cluster), aligned with the ids asked for: nil where there is none.
func ExampleUserRepo_GetUsers() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()
	users, err := userstore.NewUserRepo(rdb)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer users.Close()

	for _, u := range []*userstore.User{{ID: 1, Name: "Ada"}, {ID: 3, Name: "Edsger"}} {
		if err := users.SetUser(ctx, u); err != nil {
			fmt.Println(err)
			return
		}
	}
	got, err := users.GetUsers(ctx, []int64{1, 2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, u := range got {
		if u == nil {
			fmt.Println(i, "none")
			continue
		}
		fmt.Println(i, u.Name)
	}
	// Output:
	// 0 Ada
	// 1 none
	// 2 Edsger
}
