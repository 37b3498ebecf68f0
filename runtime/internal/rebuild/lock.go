// Package rebuild is the rebuild lock around a load of a key
// (rebuild_lock=on): one process at a time runs the loader for a key,
// across every process sharing the Redis, and the others wait for its
// result. The lock is a key of its own, taken with SET NX and released
// only by its holder; it needs no key or value type, so it is tested
// here alone against a real redis-server. The runtime's rebuildlock.go
// says what a process does while another holds it.
package rebuild

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Prefix names rebuild locks: "hotkeygen:lock:" and the entity key.
const Prefix = "hotkeygen:lock:"

// unlock deletes a rebuild lock only if it still holds our token: a lock
// that expired and was taken by another process is left alone.
var unlock = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// Lock is this process's hold, or attempt at one, on the rebuild lock of
// a key.
type Lock struct {
	rdb   redis.UniversalClient
	name  string // Prefix and the key
	token string // this process's, in the lock's value
	ttl   time.Duration
}

// New returns the rebuild lock of key, which expires ttl after it was
// taken.
func New(rdb redis.UniversalClient, key string, ttl time.Duration) *Lock {
	return &Lock{rdb: rdb, name: Prefix + key, token: strconv.FormatUint(rand.Uint64(), 36), ttl: ttl}
}

// Take takes the lock unless another process holds it, and reports
// whether it did.
func (l *Lock) Take(ctx context.Context) (bool, error) {
	return l.rdb.SetNX(ctx, l.name, l.token, l.ttl).Result()
}

// Release deletes the lock if this process still holds it.
func (l *Lock) Release(ctx context.Context) error {
	return unlock.Run(ctx, l.rdb, []string{l.name}, l.token).Err()
}

// Poll is how often a process that waits for the holder's result looks:
// a tenth of the lock's expiry, from 1ms to 50ms.
func (l *Lock) Poll() time.Duration {
	return min(50*time.Millisecond, max(time.Millisecond, l.ttl/10))
}
