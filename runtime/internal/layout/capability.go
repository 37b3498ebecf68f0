package layout

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// probeKey is the key the capability probes name: never written, so a
// probe changes nothing.
const probeKey = "hotkeygen:probe"

// FieldExpiry reports whether the server rdb reaches expires hash fields
// itself (HPEXPIRE, Redis 7.4 and later): asked of the server, not read off
// a version string, which Valkey 8.1 sets to "redis_version:7.2.4" while
// lacking the command. The probe names a key that does not exist, which
// a server that knows the command answers with -2 for the field. An error
// other than an unknown command is returned: the answer is not known.
func FieldExpiry(ctx context.Context, rdb redis.Cmdable) (bool, error) {
	err := rdb.HPExpire(ctx, probeKey, time.Minute, "f").Err()
	var rerr redis.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &rerr) && strings.Contains(strings.ToLower(rerr.Error()), "unknown command"):
		return false, nil
	}
	return false, err
}
