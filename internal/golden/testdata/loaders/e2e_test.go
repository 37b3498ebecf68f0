package store

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e, a copy of
// internal/golden/testdata/e2e, connects to it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"example.com/golden/e2e"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// db stands in for the source of truth: a table of users, and a log of
// the loader calls made to it.
type db struct {
	mu    sync.Mutex
	users map[int64]User
	loads []int64   // ids the single loader was asked for
	batch [][]int64 // ids each batch loader call was asked for
}

func (d *db) loadUser(ctx context.Context, id int64) (*User, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.loads = append(d.loads, id)
	u, ok := d.users[id]
	if !ok {
		return nil, fmt.Errorf("user %d: %w", id, runtime.ErrNotFound)
	}
	return &u, nil
}

func (d *db) loadUsers(ctx context.Context, ids []int64) (map[int64]*User, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.batch = append(d.batch, slices.Clone(ids))
	found := map[int64]*User{}
	for _, id := range ids {
		if u, ok := d.users[id]; ok {
			found[id] = &u
		}
	}
	return found, nil
}

// The README's scenario: a row only in the database is read through and
// written to Redis; an absent row is remembered, so the database is asked
// once; a write replaces that memory; a batch read loads what Redis lacks
// in one call.
func TestReadThrough(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.ClientWithout(t, UserKey(1), UserKey(2), UserKey(3), UserKey(404))
	d := &db{users: map[int64]User{1: {ID: 1, Name: "Ada"}, 2: {ID: 2, Name: "Grace"}}}
	repo := MustNewUserRepo(rdb, WithUserLoader(d.loadUser), WithUsersLoader(d.loadUsers))
	defer repo.Close()

	u, err := repo.GetUser(ctx, 1)
	if err != nil || u.Name != "Ada" {
		t.Fatalf("GetUser(1) = %+v, %v; want Ada, from the database", u, err)
	}
	if n, err := rdb.Exists(ctx, UserKey(1)).Result(); err != nil || n != 1 {
		t.Fatalf("EXISTS %s = %d, %v: the loaded row was not written to Redis", UserKey(1), n, err)
	}
	if u, err := repo.GetUser(ctx, 1); err != nil || u.Name != "Ada" || len(d.loads) != 1 {
		t.Fatalf("GetUser(1) again = %+v, %v after %d loads; want Ada, from Redis", u, err, len(d.loads))
	}

	for i := range 3 {
		if _, err := repo.GetUser(ctx, 404); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("GetUser(404), read %d: err = %v, want runtime.ErrNotFound", i, err)
		}
	}
	if want := []int64{1, 404}; !slices.Equal(d.loads, want) {
		t.Fatalf("the loader was asked for %v; want %v: an absent row is remembered, not loaded again", d.loads, want)
	}

	if err := repo.SetUser(ctx, &User{ID: 404, Name: "Found"}); err != nil {
		t.Fatal(err)
	}
	if u, err := repo.GetUser(ctx, 404); err != nil || u.Name != "Found" {
		t.Fatalf("GetUser(404) after SetUser = %+v, %v; want the row written over the placeholder", u, err)
	}

	// 1 and 404 are in Redis; 2 is in the database only; 3 is nowhere.
	got, err := repo.GetUsers(ctx, []int64{2, 1, 3, 404})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(got))
	for i, u := range got {
		if u != nil {
			names[i] = u.Name
		}
	}
	if want := []string{"Grace", "Ada", "", "Found"}; !slices.Equal(names, want) {
		t.Fatalf("GetUsers(2, 1, 3, 404) = %q; want %q, aligned with the ids", names, want)
	}
	if len(d.batch) != 1 || !slices.Equal(d.batch[0], []int64{2, 3}) {
		t.Fatalf("the batch loader was called with %v; want one call for [2 3], the ids Redis lacked", d.batch)
	}
	if len(d.loads) != 2 {
		t.Fatalf("the single loader was asked for %v; GetUsers should use the batch loader", d.loads)
	}
	// Both were written back: 2 as a row, 3 as a placeholder.
	if got, err := repo.GetUsers(ctx, []int64{2, 3}); err != nil || got[0] == nil || got[0].Name != "Grace" || got[1] != nil || len(d.batch) != 1 {
		t.Fatalf("GetUsers(2, 3) again = %+v, %v after %d batch loads; want Grace and nil, from Redis", got, err, len(d.batch))
	}
}

// GetUsers without a batch loader falls back to the loader, key by key.
func TestBatchReadFallsBackToTheLoader(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.ClientWithout(t, UserKey(21), UserKey(22))
	d := &db{users: map[int64]User{21: {ID: 21, Name: "Edsger"}}}
	repo := MustNewUserRepo(rdb, WithUserLoader(d.loadUser))
	defer repo.Close()

	got, err := repo.GetUsers(ctx, []int64{21, 22})
	if err != nil || len(got) != 2 || got[0] == nil || got[0].Name != "Edsger" || got[1] != nil {
		t.Fatalf("GetUsers(21, 22) = %+v, %v; want Edsger and nil", got, err)
	}
	slices.Sort(d.loads)
	if !slices.Equal(d.loads, []int64{21, 22}) {
		t.Fatalf("the loader was asked for %v; want 21 and 22", d.loads)
	}
}

// The composite key's loader gets the fields as GetOrder takes them, and
// its batch loader the key structs.
func TestCompositeKeyLoaders(t *testing.T) {
	ctx := context.Background()
	keys := []OrderKey{{Tenant: "t1", Num: 5}, {Tenant: "t1", Num: 6}, {Tenant: "t2", Num: 1}, {Tenant: "t9", Num: 9}}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	rdb := e2e.ClientWithout(t, names...)
	orders := map[OrderKey]*Order{{Tenant: "t1", Num: 5}: {Tenant: "t1", Num: 5, Total: 300}}
	var asked []string
	var batches [][]OrderKey
	repo := MustNewOrderRepo(rdb,
		WithOrderLoader(func(ctx context.Context, tenant string, num uint32) (*Order, error) {
			asked = append(asked, fmt.Sprintf("%s/%d", tenant, num))
			if o, ok := orders[OrderKey{Tenant: tenant, Num: num}]; ok {
				c := *o
				return &c, nil
			}
			return nil, runtime.ErrNotFound
		}),
		WithOrdersLoader(func(ctx context.Context, keys []OrderKey) (map[OrderKey]*Order, error) {
			batches = append(batches, slices.Clone(keys))
			found := map[OrderKey]*Order{}
			for _, k := range keys {
				if o, ok := orders[k]; ok {
					c := *o
					found[k] = &c
				}
			}
			return found, nil
		}),
	)
	defer repo.Close()

	o, err := repo.GetOrder(ctx, "t1", 5)
	if err != nil || o.Total != 300 || !slices.Equal(asked, []string{"t1/5"}) {
		t.Fatalf("GetOrder(t1, 5) = %+v, %v, loader asked for %v; want the order, loaded by its fields", o, err, asked)
	}
	if _, err := repo.GetOrder(ctx, "t1", 6); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetOrder(t1, 6): err = %v, want runtime.ErrNotFound", err)
	}
	orders[OrderKey{Tenant: "t2", Num: 1}] = &Order{Tenant: "t2", Num: 1, Total: 7}
	got, err := repo.GetOrders(ctx, []OrderKey{{Tenant: "t2", Num: 1}, {Tenant: "t1", Num: 5}, {Tenant: "t9", Num: 9}})
	if err != nil || len(got) != 3 || got[0] == nil || got[0].Total != 7 || got[1] == nil || got[1].Total != 300 || got[2] != nil {
		t.Fatalf("GetOrders = %+v, %v; want t2/1, t1/5 and nil", got, err)
	}
	if want := [][]OrderKey{{{Tenant: "t2", Num: 1}, {Tenant: "t9", Num: 9}}}; len(batches) != 1 || !slices.Equal(batches[0], want[0]) {
		t.Fatalf("the batch loader was called with %v; want %v", batches, want)
	}
}
