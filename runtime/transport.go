package runtime

import (
	"context"
	"maps"
	"slices"

	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// Invalidation modes: how a write on any instance, or by any other writer,
// reaches the local copies of every instance.
const (
	// InvalidateTracking uses Redis server-assisted client-side caching:
	// every write of a key whose copy is kept, by anyone, is announced to
	// the instances that keep it. The runtime's own connection to the
	// key's server (on a cluster, to its master and each replica) reads
	// each held key to have it tracked: a few bytes of server memory per
	// key and instance, and no message for a write of a key nobody holds.
	InvalidateTracking = "tracking"
	// InvalidatePubSub has the repositories' own writes announced on a
	// channel of the entity's; writes by other programs are not seen.
	// Tracking falls back to it on a server without client tracking.
	// Every instance holding a copy of any of the entity's keys hears
	// every write of the entity.
	InvalidatePubSub = "pubsub"
	// InvalidatePubSubKeys hears the same announcements on a channel per
	// key, subscribed to only for the keys of the copies kept: a write of
	// a key no instance holds sends no message. Every repository announces
	// on both channels, so a fleet moves from InvalidatePubSub to it by a
	// rolling deploy of this release first (see docs/failures.md).
	InvalidatePubSubKeys = "pubsub-keys"
	// InvalidateOff leaves freshness to refresh alone.
	InvalidateOff = "off"
)

// The copies (freshness.go) are a Cache's side of the transport
// (runtime/internal/track): the hub of the Cache's client, shared by every
// repository on it, tells them which keys changed, when a session starts
// and when slots move, and they apply each through the freshness protocol.

// Changed marks the copies of keys, or of every key, unverified.
func (s *copies[K, V]) Changed(keys []string, flush bool) {
	if flush {
		s.flushed()
	} else {
		s.invalidate(keys)
	}
	if s.cfg.onInvalidate != nil {
		s.cfg.onInvalidate(keys)
	}
}

// Live reloads the copies of n that are unverified, when a session of n
// has just started: unchanged bytes make a copy verified again, changed
// bytes replace it, a missing key drops it. Until then reads of those
// keys ask Redis.
func (s *copies[K, V]) Live(ctx context.Context, n *track.Node) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.done, cancel)() // the Cache's Close does not wait on Redis
	var es []*hotEntry[K]
	for _, e := range s.det.hot.Load().m {
		if e.unverifiedOn(n) {
			es = append(es, e)
		}
	}
	s.reload(ctx, es)
}

// Moved makes the copies of keys whose slot moved unverified until
// Settled reloads them from their new owner.
func (s *copies[K, V]) Moved(moved func(key string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.det.hot.Load().m {
		if moved(e.key) {
			s.revoke(e)
			s.moved[e] = struct{}{}
		}
	}
}

// Settled reloads the copies Moved made unverified.
func (s *copies[K, V]) Settled(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.done, cancel)()
	s.mu.Lock()
	es := make([]*hotEntry[K], 0, len(s.moved))
	for e := range s.moved {
		es = append(es, e)
	}
	clear(s.moved)
	s.mu.Unlock()
	s.reload(ctx, es)
}

// Hot returns the Redis keys of the hot set.
func (s *copies[K, V]) Hot() []string {
	return slices.Collect(maps.Keys(s.det.hot.Load().byName))
}
