package userstore

import (
	"context"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// Two replicas of the service, each with its own client: a write through
// one repository reaches the other's local copy of a hot user.
func TestWriteOnOneReplicaReachesAnother(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	newRepo := func() *UserRepo {
		r := MustNewUserRepo(srv.Client(t), runtime.WithHotQPS(50), runtime.WithWarmQPS(10))
		t.Cleanup(func() { r.Close() })
		return r
	}
	a, b := newRepo(), newRepo()
	if err := a.SetUser(ctx, &User{ID: 7, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	// Hot after 50 reads in a second; its copy starts b's invalidation
	// session, and is served from memory once the session vouches for it.
	deadline := time.Now().Add(10 * time.Second)
	for b.Stats().Hits == 0 {
		if _, err := b.GetUser(ctx, 7); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("user:7 is not served from b's memory: %+v", b.Stats())
		}
	}
	if err := a.SetUser(ctx, &User{ID: 7, Name: "Ada Lovelace"}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		u, err := b.GetUser(ctx, 7)
		if err != nil {
			t.Fatal(err)
		}
		if u.Name == "Ada Lovelace" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b still serves %q after a's write", u.Name)
		}
		time.Sleep(time.Millisecond)
	}
	// The new value may have come from Redis first (a read between two of
	// the session's vouches asks it); the invalidation still reaches b.
	for b.Stats().Invalidations == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a's write never reached b as an invalidation: %+v", b.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}
