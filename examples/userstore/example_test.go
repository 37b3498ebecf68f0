package userstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
)

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

	db, err := userstore.OpenDB(ctx, "") // SQLite in memory; a postgres:// URL for PostgreSQL
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	if err := db.Seed(ctx, []*userstore.User{{ID: 42, Name: "Grace"}}, nil); err != nil {
		fmt.Println(err)
		return
	}
	users, err := userstore.NewUserRepo(rdb, userstore.WithUserLoader(db.User))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer users.Close()

	before := db.Queries()
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
	fmt.Println("database queries:", db.Queries()-before)

	// A write goes to the database, then deletes the key from Redis
	// (update, then delete): the next read loads the new row.
	if err := db.SaveUser(ctx, users, &userstore.User{ID: 42, Name: "Grace Hopper"}); err != nil {
		fmt.Println(err)
		return
	}
	u, err := users.GetUser(ctx, 42)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Name)
	// Output:
	// Grace
	// Grace
	// Grace
	// true
	// true
	// true
	// database queries: 2
	// Grace Hopper
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
