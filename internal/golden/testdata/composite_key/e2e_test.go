package orders

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e, a copy of
// internal/golden/testdata/e2e, connects to it.

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"example.com/golden/e2e"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// The cache is keyed by the key struct, not by a string.
func _() { var _ *runtime.Cache[OrderKey, Order] = (&OrderRepo{}).c }

func TestOrderRepo(t *testing.T) {
	rdb := e2e.Client(t)
	ctx := context.Background()
	repo := MustNewOrderRepo(rdb, runtime.WithHotQPS(1), runtime.WithWarmQPS(1))
	defer repo.Close()

	want := Order{Tenant: "t1", Num: 5, Items: []Item{{SKU: "apple", Qty: 2}}, Total: 300}
	if err := repo.SetOrder(ctx, &want); err != nil {
		t.Fatal(err)
	}
	key := OrderKey{Tenant: "t1", Num: 5}
	if got := key.String(); got != "order:t1:5" {
		t.Fatalf(`OrderKey{Tenant: "t1", Num: 5}.String() = %q, want "order:t1:5"`, got)
	}
	if keys, err := rdb.Keys(ctx, "order:*").Result(); err != nil || !reflect.DeepEqual(keys, []string{key.String()}) {
		t.Fatalf("keys = %q, %v; want exactly %q, the key OrderKey builds", keys, err, key.String())
	}

	for i, start := 0, time.Now(); time.Since(start) < e2e.Patience && repo.Stats().Hits < 3; i++ {
		got, err := repo.GetOrder(ctx, "t1", 5)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("read %d got %+v, want %+v: an earlier caller's changes leaked", i, *got, want)
		}
		got.Items[0].Qty = 99
		got.Items = append(got.Items, Item{SKU: "pear"})
	}
	if st := repo.Stats(); st.Hits < 3 || len(st.HotKeys) != 1 || st.HotKeys[0].Key != key.String() {
		t.Fatalf("Stats() = %+v: %s was never served from memory", st, key)
	}

	if _, err := repo.GetOrder(ctx, "t1", 6); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetOrder of a missing order: err = %v, want runtime.ErrNotFound", err)
	}
	if err := repo.DelOrder(ctx, "t1", 5); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.Exists(ctx, "order:t1:5").Result(); n != 0 {
		t.Fatal("DelOrder left order:t1:5 in Redis")
	}
	if _, err := repo.GetOrder(ctx, "t1", 5); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetOrder after DelOrder: err = %v, want runtime.ErrNotFound", err)
	}
}
