package model

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e, a copy of
// internal/golden/testdata/e2e, connects to it.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"example.com/golden/e2e"
	"github.com/hotkeygen/hotkeygen/runtime"
)

func TestUserRepo(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)
	// A rate of one read per second makes a key hot on its first read, so
	// the reads below are served from memory, where clones matter.
	repo := MustNewUserRepo(rdb, runtime.WithHotQPS(1), runtime.WithWarmQPS(1))
	defer repo.Close()

	if got := UserKey(42); got != "user:42" {
		t.Fatalf(`UserKey(42) = %q, want "user:42"`, got)
	}
	if err := repo.SetUser(ctx, &User{ID: 42, Name: "Ada", Tags: []string{"admin"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, "user:42").Result(); err != nil || n != 1 {
		t.Fatalf("EXISTS user:42 = %d, %v; want the key exactly as the template reads", n, err)
	}
	// The runtime spreads every write's TTL by up to ±DefaultJitter.
	lo := time.Duration(float64(30*time.Minute)*(1-runtime.DefaultJitter)) - time.Minute
	hi := time.Duration(float64(30*time.Minute) * (1 + runtime.DefaultJitter))
	if ttl, err := rdb.TTL(ctx, "user:42").Result(); err != nil || ttl <= lo || ttl > hi {
		t.Fatalf("TTL user:42 = %v, %v; want the annotation's ttl=30m, give or take the jitter", ttl, err)
	}

	for i, start := 0, time.Now(); time.Since(start) < e2e.Patience && repo.Stats().Hits < 3; i++ {
		u, err := repo.GetUser(ctx, 42)
		if err != nil {
			t.Fatal(err)
		}
		if u.Name != "Ada" || !slices.Equal(u.Tags, []string{"admin"}) {
			t.Fatalf("read %d got %+v: an earlier caller's changes leaked", i, u)
		}
		u.Name, u.Tags[0] = "Mallory", "root"
		u.Tags = append(u.Tags, "extra")
	}
	if st := repo.Stats(); st.Hits < 3 {
		t.Fatalf("Stats().Hits = %d: the key was never served from memory", st.Hits)
	}

	if err := repo.DelUser(ctx, 42); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.GetUser(ctx, 42); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetUser after DelUser: err = %v, want runtime.ErrNotFound", err)
	}
	if _, err := repo.GetUser(ctx, 7); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetUser of a missing id: err = %v, want runtime.ErrNotFound", err)
	}
}
