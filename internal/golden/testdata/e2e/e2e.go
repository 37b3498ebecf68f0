// Package e2e connects the golden cases' end-to-end tests to Redis.
//
// TestGeneratedCodeBuildsAndRuns copies this file into the module it
// builds from the cases, as the package example.com/golden/e2e, and runs
// the cases' tests with REDIS_ADDR set to the address of a private
// redis-server. It lives under testdata so that this repository's ./...
// leaves it out.
package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client connects to the redis-server whose address is in REDIS_ADDR,
// and closes the connection when the test and its subtests are done.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		t.Fatal("REDIS_ADDR is not set: run this through go test ./internal/golden")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// ClientWithout is Client, from which it first deletes keys, so that what
// a test expects to load is not there from an earlier run.
func ClientWithout(t testing.TB, keys ...string) *redis.Client {
	t.Helper()
	rdb := Client(t)
	if len(keys) == 0 {
		return rdb
	}
	if err := rdb.Del(context.Background(), keys...).Err(); err != nil {
		t.Fatal(err)
	}
	return rdb
}

// Patience is how long a test keeps reading a hot key before it decides
// the key is never served from memory. A fresh Cache serves from memory
// only once its invalidation session is live, which takes a few
// milliseconds on an idle machine and longer on a loaded one; a user's
// service simply keeps reading, and so does the test.
const Patience = 10 * time.Second
