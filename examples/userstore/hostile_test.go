package userstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/wire/wiretest"
)

// The generated repositories refuse every hostile value in Redis with
// ErrDecode, on Get, on GetMany and in the background refresh of a hot
// key, which keeps serving the last good copy; wherever the value sits
// (the whole user, a string field, a slice, a nested struct of an order),
// nothing panics or allocates from a length the value declares.
func TestHostileValuesInGeneratedRepositories(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := []runtime.Option{runtime.WithLogger(quiet), runtime.WithHotQPS(50), runtime.WithWarmQPS(1),
		runtime.WithRefresh(20 * time.Millisecond), runtime.WithRefreshFailures(1 << 20), runtime.WithInvalidate(runtime.InvalidateOff)}
	users, orders := MustNewUserRepo(rdb, opts...), MustNewOrderRepo(rdb, opts...)
	defer users.Close()
	defer orders.Close()
	ctx := context.Background()

	ada := &User{ID: 7, Name: "Ada"}
	if err := users.SetUser(ctx, ada); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := users.GetUser(ctx, 7); err != nil {
			t.Fatal(err)
		}
	}
	if len(users.Stats().HotKeys) != 1 {
		t.Fatal("user:7 is not hot")
	}
	_, _ = users.GetUsers(ctx, []int64{1, 2}) // the first batch allocates once for good
	_, _ = orders.GetOrders(ctx, []OrderKey{{"a", 1}})
	_, _ = orders.GetOrder(ctx, "a", 1)

	for i, h := range wiretest.Hostile() {
		for _, c := range []struct {
			name string
			b    []byte
			read func(id int) error
		}{
			{"User", h.Bytes, func(id int) error { return readUser(ctx, users, int64(id)) }},
			{"User.Name", wiretest.InField("Name", h.Bytes), func(id int) error { return readUser(ctx, users, int64(id)) }},
			{"User.Tags", wiretest.InField("Tags", h.Bytes), func(id int) error { return readUser(ctx, users, int64(id)) }},
			{"Order.Items", wiretest.InField("Items", h.Bytes), func(id int) error { return readOrder(ctx, orders, uint32(id)) }},
			{"Order.Items[0]", wiretest.InField("Items", append([]byte{0x91}, h.Bytes...)), func(id int) error { return readOrder(ctx, orders, uint32(id)) }},
		} {
			t.Run(h.Name+"/"+c.name, func(t *testing.T) {
				id := 1000 + i
				key := UserKey(int64(id))
				if c.name[0] == 'O' {
					key = OrderKey{"hostile", uint32(id)}.String()
				}
				if err := rdb.Set(ctx, key, c.b, 0).Err(); err != nil {
					t.Fatal(err)
				}
				// The budget leaves room for the refresh of the hot user,
				// which runs meanwhile; a length the value declares would
				// cost megabytes to gigabytes.
				var err error
				if n, max := wiretest.Allocated(1, func() { err = c.read(id) }), uint64(8*len(c.b))+1<<20; n > max {
					t.Errorf("reading %d bytes allocated %d, more than %d", len(c.b), n, max)
				}
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}

	// The refresh of the hot user meets the 13-byte value and 1 MiB of
	// nesting: each refresh fails, and reads say what Redis holds, never
	// the last good copy while Redis answers.
	for _, h := range wiretest.Hostile() {
		if h.Name != "the 13-byte value" && h.Name != "1 MiB of nested arrays" {
			continue
		}
		before := users.Stats().RefreshErrors
		if err := rdb.Set(ctx, UserKey(7), h.Bytes, 0).Err(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); users.Stats().RefreshErrors < before+3; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no failed refresh in 10 s: %+v", h.Name, users.Stats())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got, err := users.GetUser(ctx, 7); !errors.Is(err, runtime.ErrDecode) {
			t.Fatalf("%s: the hot user reads %+v, %v; want ErrDecode", h.Name, got, err)
		}
	}
}

func readUser(ctx context.Context, users *UserRepo, id int64) error {
	if _, err := users.GetUser(ctx, id); !errors.Is(err, runtime.ErrDecode) {
		return fmt.Errorf("GetUser = %v, want ErrDecode", err)
	}
	if _, err := users.GetUsers(ctx, []int64{7, id}); !errors.Is(err, runtime.ErrDecode) {
		return fmt.Errorf("GetUsers = %v, want ErrDecode", err)
	}
	return nil
}

func readOrder(ctx context.Context, orders *OrderRepo, num uint32) error {
	if _, err := orders.GetOrder(ctx, "hostile", num); !errors.Is(err, runtime.ErrDecode) {
		return fmt.Errorf("GetOrder = %v, want ErrDecode", err)
	}
	if _, err := orders.GetOrders(ctx, []OrderKey{{"hostile", num}}); !errors.Is(err, runtime.ErrDecode) {
		return fmt.Errorf("GetOrders = %v, want ErrDecode", err)
	}
	return nil
}
