package livepage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// Serve the live page of a service's repositories under /debug/hotkeys/,
// then read its JSON as a monitoring script would.
func ExampleHandler() {
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr}) // your Redis, e.g. "localhost:6379"
	defer rdb.Close()
	users := userstore.MustNewUserRepo(rdb)
	defer users.Close()
	orders := userstore.MustNewOrderRepo(rdb)
	defer orders.Close()

	ctx := context.Background()
	if err := users.SetUser(ctx, &userstore.User{ID: 7, Name: "Ada"}); err != nil {
		log.Fatal(err)
	}
	for range 3 {
		if _, err := users.GetUser(ctx, 7); err != nil {
			log.Fatal(err)
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/debug/hotkeys/", http.StripPrefix("/debug/hotkeys", livepage.Handler(users, orders)))
	srv := httptest.NewServer(mux) // in a service: go http.ListenAndServe("127.0.0.1:6060", mux)
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/debug/hotkeys/hotkeys.json")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var rep livepage.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		log.Fatal(err)
	}
	for _, e := range rep.Entities {
		fromMemory := "none" // no key is hot yet: every read went to Redis
		if e.MemoryShare != nil {
			fromMemory = fmt.Sprintf("%.1f%%", 100**e.MemoryShare)
		}
		redisUp := e.RedisDownSince == nil
		fmt.Printf("%s: %d reads, from memory %s, Redis answering %v, invalidation %s\n", e.Entity, e.Reads, fromMemory, redisUp, e.Invalidation)
	}
	// Output:
	// user: 3 reads, from memory none, Redis answering true, invalidation tracking
	// order: 0 reads, from memory none, Redis answering true, invalidation tracking
}
