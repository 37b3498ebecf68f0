package userstore

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// TestNewRepoReturnsErrors specifies what a generated constructor does
// with a repository that cannot work: it returns an error that says what
// to change, and no repository; it never ends the process.
func TestNewRepoReturnsErrors(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": srv.Addr}})
	t.Cleanup(func() { ring.Close() })
	pipeliner, err := srv.Client(t).AutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pipeliner.Close() })
	wrongLoader := func(context.Context, string) (*User, error) { return nil, runtime.ErrNotFound }

	tests := []struct {
		name string
		rdb  redis.UniversalClient
		opts []runtime.Option
		// want is in the error; empty means the repository is built.
		want string
	}{
		{"a Ring with the default invalidation, tracking, is told to use pubsub", ring, nil, `got *redis.Ring; use WithInvalidate("pubsub")`},
		{"an AutoPipeliner with tracking is told to use pubsub", pipeliner, nil, `got *redis.AutoPipeliner; use WithInvalidate("pubsub")`},
		{"a Ring with pubsub works", ring, []runtime.Option{runtime.WithInvalidate(runtime.InvalidatePubSub)}, ""},
		{"a Ring with invalidation off works", ring, []runtime.Option{runtime.WithInvalidate(runtime.InvalidateOff)}, ""},
		{"WithWarmQPS above the annotation's hot_qps=500 contradicts it", client, []runtime.Option{runtime.WithWarmQPS(1000)}, "invalid warm_qps"},
		{"WithWarmQPS above WithHotQPS contradicts it", client, []runtime.Option{runtime.WithHotQPS(100), runtime.WithWarmQPS(200)}, "invalid warm_qps"},
		{"a loader keyed by the wrong type is refused", client, []runtime.Option{runtime.WithLoader(wrongLoader)}, "needs a func(context.Context, int64)"},
		{"a nil client is refused", nil, nil, "needs a Redis client"},
		// The annotation's options are not the caller's: a nil option is
		// named by its place among those passed.
		{"a nil option is named by its place among the caller's", client, []runtime.Option{runtime.WithHotQPS(600), nil}, "option 2 of 2 is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo, err := NewUserRepo(tt.rdb, tt.opts...)
			if tt.want == "" {
				if err != nil || repo == nil {
					t.Fatalf("NewUserRepo = %v, %v; want a repository", repo, err)
				}
				repo.Close()
				return
			}
			if err == nil || repo != nil {
				t.Fatalf("NewUserRepo = %v, %v; want no repository and an error containing %q", repo, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "hotkey: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewUserRepo: %v; want the prefix \"hotkey: \" and %q", err, tt.want)
			}
		})
	}
}

// TestMustNewRepoPanicsWithTheError: MustNew<Name>Repo is for options fixed
// in the code, where an error is a programming error, as in
// regexp.MustCompile.
func TestMustNewRepoPanicsWithTheError(t *testing.T) {
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": "127.0.0.1:1"}})
	defer ring.Close()
	_, want := NewOrderRepo(ring)
	if want == nil {
		t.Fatal("NewOrderRepo over a Ring with tracking returned no error")
	}
	defer func() {
		if got, _ := recover().(error); got == nil || got.Error() != want.Error() {
			t.Fatalf("MustNewOrderRepo panicked with %v, want %v", got, want)
		}
	}()
	MustNewOrderRepo(ring)
}

// TestNilWritesAreErrors: every generated write that takes a value
// refuses nil with an error, before it reads the value's key fields.
func TestNilWritesAreErrors(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	users, orders := MustNewUserRepo(rdb), MustNewOrderRepo(rdb)
	defer users.Close()
	defer orders.Close()
	ctx := context.Background()

	tests := []struct {
		name  string
		write func() error
		want  string
	}{
		{"SetUser(nil)", func() error { return users.SetUser(ctx, nil) }, "hotkey: SetUser: the User is nil; call DelUser to delete it"},
		{"SetOrder(nil), of a composite key", func() error { return orders.SetOrder(ctx, nil) }, "hotkey: SetOrder: the Order is nil; call DelOrder to delete it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(); err == nil || err.Error() != tt.want {
				t.Fatalf("%s = %v, want %q", tt.name, err, tt.want)
			}
		})
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("the nil writes left %d keys in Redis, want none", n)
	}
}
