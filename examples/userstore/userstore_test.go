package userstore

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

func TestUserRepo(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	repo := MustNewUserRepo(rdb, runtime.WithHotQPS(50), runtime.WithWarmQPS(10))
	defer repo.Close()
	ctx := context.Background()

	ada := &User{ID: 7, Name: "Ada", Email: "ada@example.com", Tags: []string{"admin"}}
	if err := repo.SetUser(ctx, ada); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, "user:7").Val(); ttl <= 0 {
		t.Fatalf("user:7 has TTL %v, want the annotation's 30m", ttl)
	}
	for range 100 { // hot_qps 50: the 50th read in a second promotes it
		got, err := repo.GetUser(ctx, 7)
		if err != nil || !reflect.DeepEqual(got, ada) {
			t.Fatalf("GetUser(7) = %+v, %v", got, err)
		}
	}
	st := repo.Stats()
	if len(st.HotKeys) != 1 || st.HotKeys[0].Key != "user:7" || st.Hits == 0 {
		t.Fatalf("user:7 not served locally: %+v", st)
	}

	got, _ := repo.GetUser(ctx, 7)
	got.Tags[0] = "mallory"
	if again, _ := repo.GetUser(ctx, 7); again.Tags[0] != "admin" {
		t.Fatal("a caller's change reached the local copy")
	}

	if err := repo.DelUser(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.GetUser(ctx, 7); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetUser after DelUser = %v, want ErrNotFound", err)
	}
}

func TestOrderRepoCompositeKey(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	repo := MustNewOrderRepo(rdb)
	defer repo.Close()
	ctx := context.Background()

	o := &Order{Tenant: "acme", Num: 5, Items: []Item{{SKU: "bolt", Qty: 3}}, Total: 1299}
	if err := repo.SetOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, "order:acme:5").Val(); n != 1 {
		t.Fatal(`the order is not stored under "order:acme:5"`)
	}
	got, err := repo.GetOrder(ctx, "acme", 5)
	if err != nil || !reflect.DeepEqual(got, o) {
		t.Fatalf("GetOrder = %+v, %v", got, err)
	}
	if _, err := repo.GetOrder(ctx, "acme", 6); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetOrder of a missing order = %v, want ErrNotFound", err)
	}
}
