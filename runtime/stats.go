package runtime

import (
	"cmp"
	"math/bits"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a Cache's counters. Counters are totals since the
// Cache was made; rates are measured over the detection window.
type Stats struct {
	Entity string

	Gets               uint64  // reads
	GetQPS             float64 // reads per second over the window
	DistinctKeysPerSec float64 // distinct keys read in the last slot, per second

	HotAccesses  uint64  // reads of hot keys
	Hits         uint64  // hot reads served locally
	Misses       uint64  // hot reads that went to Redis
	HitRate      float64 // Hits / HotAccesses
	TrafficShare float64 // HotAccesses / Gets

	HotKeys []HotKey // highest rate first

	LocalSize    int // values held locally
	RecorderSize int // keys tracked by detection
	RegistrySize int // hot keys registered for refresh

	Promotions    uint64
	Demotions     uint64
	Refreshes     uint64 // successful reloads of hot keys
	RefreshErrors uint64
	RedisErrors   uint64
	DecodeErrors  uint64
}

// HotKey describes one key in the hot set.
type HotKey struct {
	Key string
	// QPS is the rate detection ranks the key by (see KeyRate.Score).
	QPS   float64
	Since time.Time // when it was promoted
}

// readStripe holds the read-path counters of one stripe, padded to its own
// cache line so goroutines on different cores do not contend. Each read
// adds to exactly one of them; totals are derived.
type readStripe struct {
	cold, hits, misses atomic.Uint64
	_                  [40]byte
}

// readCounters are striped so that a hot key read on every core does not
// bounce one cache line between them.
type readCounters struct {
	stripes []readStripe
	mask    uint32
}

func newReadCounters() readCounters {
	n := 1 << bits.Len(uint(max(4, min(64, goruntime.GOMAXPROCS(0)*2))-1))
	return readCounters{stripes: make([]readStripe, n), mask: uint32(n - 1)}
}

// stripe picks a stripe from a uniformly random rnd.
func (c *readCounters) stripe(rnd uint32) *readStripe { return &c.stripes[rnd&c.mask] }

type readTotals struct{ gets, hot, hits, misses uint64 }

func (c *readCounters) load() readTotals {
	var t readTotals
	for i := range c.stripes {
		s := &c.stripes[i]
		cold := s.cold.Load()
		hits := s.hits.Load()
		misses := s.misses.Load()
		t.gets += cold + hits + misses
		t.hot += hits + misses
		t.hits += hits
		t.misses += misses
	}
	return t
}

// errorCounters count the rare events; plain atomics suffice.
type errorCounters struct {
	refreshes, refreshErrors, redisErrors, decodeErrors atomic.Uint64
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Stats returns a snapshot of the counters and the current hot keys.
func (c *Cache[V]) Stats() Stats {
	t := c.reads.load()
	hs := c.det.hot.Load()
	hot := make([]HotKey, 0, len(hs.m))
	registered := 0
	for k, e := range hs.m {
		hot = append(hot, HotKey{Key: k, QPS: c.det.rec.Rate(k).Score(), Since: e.since})
		e.mu.Lock()
		if e.registered {
			registered++
		}
		e.mu.Unlock()
	}
	slices.SortFunc(hot, func(a, b HotKey) int {
		if c := cmp.Compare(b.QPS, a.QPS); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return Stats{
		Entity:             c.cfg.Entity,
		Gets:               t.gets,
		GetQPS:             c.getQPS(),
		DistinctKeysPerSec: c.det.rec.DistinctPerSec(),
		HotAccesses:        t.hot,
		Hits:               t.hits,
		Misses:             t.misses,
		HitRate:            ratio(t.hits, t.hot),
		TrafficShare:       ratio(t.hot, t.gets),
		HotKeys:            hot,
		LocalSize:          c.local.Len(),
		RecorderSize:       c.det.rec.Len(),
		RegistrySize:       registered,
		Promotions:         c.det.promotions.Load(),
		Demotions:          c.det.demotions.Load(),
		Refreshes:          c.errs.refreshes.Load(),
		RefreshErrors:      c.errs.refreshErrors.Load(),
		RedisErrors:        c.errs.redisErrors.Load(),
		DecodeErrors:       c.errs.decodeErrors.Load(),
	}
}
