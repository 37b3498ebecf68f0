package layout

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// What each server of the matrix can do, asked of the server itself
// (make matrix runs this on each): Redis 8.0 expires hash fields, Valkey
// 8.1 does not, and calls itself Redis 7.2.4, so a version check would be
// wrong about it. The system's server (Debian's 7.0 on CI, whatever a
// developer has) must answer as its Redis version says it should.
func TestEachServerSaysWhetherItExpiresHashFields(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	got, err := FieldExpiry(t.Context(), rdb)
	if err != nil {
		t.Fatal(err)
	}
	info, err := rdb.Info(t.Context(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for line := range strings.Lines(info) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	version, valkey := fields["redis_version"], fields["valkey_version"]
	switch server := redistest.ServerName(); server {
	case "redis-8.0":
		if !got || !strings.HasPrefix(version, "8.0.") {
			t.Errorf("Redis 8.0: FieldExpiry %v, redis_version %q; want true, 8.0.x", got, version)
		}
	case "valkey-8.1":
		if got || version != "7.2.4" || !strings.HasPrefix(valkey, "8.1.") {
			t.Errorf("Valkey 8.1: FieldExpiry %v, redis_version %q, valkey_version %q; want false, 7.2.4, 8.1.x", got, version, valkey)
		}
	case "system":
		if valkey != "" {
			t.Logf("the system's server is Valkey %s (redis_version %s): FieldExpiry %v", valkey, version, got)
			break
		}
		if want := atLeast(version, 7, 4); got != want {
			t.Errorf("Redis %s: FieldExpiry %v, want %v (hash field expiry came in 7.4)", version, got, want)
		}
	default:
		t.Fatalf("no expectation for HOTKEYGEN_SERVER=%s; add its case", server)
	}
	if n, err := rdb.Exists(t.Context(), probeKey).Result(); err != nil || n != 0 {
		t.Errorf("the probe left its key behind (%d, %v)", n, err)
	}
}

// atLeast reports whether version (major.minor.patch) is major.minor or
// later.
func atLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (ma > major || ma == major && mi >= minor)
}
