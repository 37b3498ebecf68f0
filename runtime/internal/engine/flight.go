package engine

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
)

// loadCall is one read of a key from Redis, and from the loader when Redis
// misses, shared by every caller that misses the key while it runs. Its
// value is shared too: callers hand out clones.
type loadCall[V any] struct {
	// t is what the read knew when it was sent: a caller may share it
	// only if it knows no more (see internal/fresh).
	t fresh.Token
	// patient reads Redis even while the key's node is believed down:
	// the caller holds a copy known to be older than what Redis holds
	// (superseded), which it may not serve, and Redis is its only answer.
	patient bool
	// after is the load of the same key that was in flight when this one
	// began, which this one could not share: before calling the loader,
	// this one waits for it to land and reads Redis again, where it wrote
	// its row back, so that concurrent misses of a key call the loader
	// once, whatever the reason the second could not share the first
	// (a write, or an invalidation session starting meanwhile). nil when
	// none was.
	after *loadCall[V]
	// leased is set, under loads.mu, once the load holds the key's
	// lease; lost, before done is closed, when a write or a delete took
	// the key while it loaded: its row was not written back, and a caller
	// that joined after the lease was taken reads again (see leased).
	leased, lost bool
	done         chan struct{}
	v            *V
	err          error
	from         Outcome // Redis, or Loaded once the load went to the loader

	waiters atomic.Int32 // callers sharing the read; read by tests
}

// missed is what a caller read from Redis before it asked for a load:
// err, the miss, and landed, the landings of the key's shard counted
// before the read was sent (see landings). The zero missed is no read:
// the load reads Redis itself.
type missed struct {
	err    error
	landed uint64
}

// landings counts, for each of a few shards of keys, the loads that have
// ended. A load ends after its value is written back to Redis, and is
// counted before it leaves c.loads.flights, so a caller whose Redis read missed
// and who then finds no load in flight knows, by the count it took before
// its read, whether one landed in between: then its miss may predate the
// write-back, and its load reads Redis again instead of calling the
// loader a second time for the same key.
type landings struct {
	seed maphash.Seed
	n    [64]atomic.Uint64
}

func newLandings() *landings { return &landings{seed: maphash.MakeSeed()} }

func (l *landings) of(key string) *atomic.Uint64 {
	return &l.n[maphash.String(l.seed, key)%uint64(len(l.n))]
}
