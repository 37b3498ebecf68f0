package rebuild

import (
	"context"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

// One process at a time holds a key's lock; the holder's release frees
// it, and another's release does not.
func TestOneHolderAtATime(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	a, b := New(rdb, "p:1", time.Minute), New(rdb, "p:1", time.Minute)
	for _, step := range []struct {
		name string
		do   func() (bool, error)
		want bool
	}{
		{"a takes it", func() (bool, error) { return a.Take(ctx) }, true},
		{"b finds it taken", func() (bool, error) { return b.Take(ctx) }, false},
		{"b's release leaves it", func() (bool, error) { return false, b.Release(ctx) }, false},
		{"b still finds it taken", func() (bool, error) { return b.Take(ctx) }, false},
		{"a releases it", func() (bool, error) { return false, a.Release(ctx) }, false},
		{"b takes it", func() (bool, error) { return b.Take(ctx) }, true},
		{"another key's is free", func() (bool, error) { return New(rdb, "p:2", time.Minute).Take(ctx) }, true},
	} {
		if got, err := step.do(); err != nil || got != step.want {
			t.Fatalf("%s: %v, %v; want %v", step.name, got, err, step.want)
		}
	}
	if ttl := rdb.PTTL(ctx, Prefix+"p:1").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("the lock expires in %v, want within its minute", ttl)
	}
}

// A lock that expired and was taken by another process is left alone by
// the first holder's release.
func TestAReleaseAfterExpiryLeavesTheNextHolder(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	a, b := New(rdb, "p:1", 50*time.Millisecond), New(rdb, "p:1", time.Minute)
	if ok, err := a.Take(ctx); !ok || err != nil {
		t.Fatalf("a: %v, %v", ok, err)
	}
	time.Sleep(100 * time.Millisecond)
	if ok, err := b.Take(ctx); !ok || err != nil {
		t.Fatalf("b after a's lock expired: %v, %v", ok, err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if rdb.Exists(ctx, Prefix+"p:1").Val() != 1 {
		t.Fatal("a's late release deleted b's lock")
	}
}

func TestPoll(t *testing.T) {
	for _, tc := range []struct{ ttl, want time.Duration }{
		{3 * time.Second, 50 * time.Millisecond},
		{200 * time.Millisecond, 20 * time.Millisecond},
		{5 * time.Millisecond, time.Millisecond},
	} {
		if got := New(nil, "k", tc.ttl).Poll(); got != tc.want {
			t.Errorf("Poll of a %v lock = %v, want %v", tc.ttl, got, tc.want)
		}
	}
}
