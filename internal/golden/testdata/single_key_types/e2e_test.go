package tenants

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
	"github.com/hotkeygen/hotkeygen/internal/golden/testdata/single_key_types/geo"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// The caches are keyed by the key field's own type, not by a string.
func _() {
	var _ *runtime.Cache[TenantID, Tenant] = (&TenantRepo{}).c
	var _ *runtime.Cache[geo.Region, Zone] = (&ZoneRepo{}).c
}

func TestKeys(t *testing.T) {
	if got := TenantKey(-7); got != "tenant:-7" {
		t.Errorf(`TenantKey(-7) = %q, want "tenant:-7"`, got)
	}
	if got := ZoneKey("eu-west"); got != "zone:eu-west" {
		t.Errorf(`ZoneKey("eu-west") = %q, want "zone:eu-west"`, got)
	}
}

func TestZoneRepo(t *testing.T) {
	rdb := e2e.Client(t)
	ctx := context.Background()
	repo := MustNewZoneRepo(rdb, runtime.WithHotQPS(1), runtime.WithWarmQPS(1))
	defer repo.Close()

	if err := repo.SetZone(ctx, &Zone{Region: "eu-west", Hosts: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, ZoneKey("eu-west")).Result(); err != nil || n != 1 {
		t.Fatalf("EXISTS %s = %d, %v; want the key ZoneKey builds", ZoneKey("eu-west"), n, err)
	}
	for i, start := 0, time.Now(); time.Since(start) < e2e.Patience && repo.Stats().Hits < 3; i++ {
		z, err := repo.GetZone(ctx, "eu-west")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(z.Hosts, []string{"a", "b"}) {
			t.Fatalf("read %d got %+v: an earlier caller's changes leaked", i, z)
		}
		z.Hosts[0] = "x"
	}
	st := repo.Stats()
	if st.Hits < 3 || len(st.HotKeys) != 1 || st.HotKeys[0].Key != "zone:eu-west" {
		t.Fatalf("zone:eu-west was not served from memory: %+v", st)
	}
	if err := repo.DelZone(ctx, "eu-west"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.GetZone(ctx, "eu-west"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetZone after DelZone: err = %v, want runtime.ErrNotFound", err)
	}
}
