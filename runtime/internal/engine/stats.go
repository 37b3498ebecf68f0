package engine

import (
	"cmp"
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// Stats is a snapshot of a Cache's counters. Counters are totals since the
// Cache was made; rates are measured over the detection window.
type Stats struct {
	Entity string
	// Version is the version of the entity's values this build reads
	// and writes (the annotation's version=): every key it reads was
	// written by a build of this version, so DecodeErrors are of it.
	Version int
	// Host and PID say which instance this is: the machine's name
	// (os.Hostname) and the process's id.
	Host string
	PID  int

	Reads              uint64  // reads, served locally or from Redis
	ReadsPerSec        float64 // reads per second over the window
	DistinctKeysPerSec float64 // distinct keys read in the last slot, per second

	HotAccesses  uint64  // reads of hot keys
	Hits         uint64  // hot reads served locally
	Misses       uint64  // hot reads that went to Redis
	HitRate      float64 // Hits / HotAccesses
	TrafficShare float64 // HotAccesses / Reads

	HotKeys []HotKey // highest rate first

	// Outcomes counts the reads by how each was answered; they add up to
	// Reads.
	Outcomes ReadOutcomes

	LocalSize int // values held locally
	// LocalBytes is the encoded size of the values held locally: what they
	// occupy in Redis, a lower bound of their size in memory.
	LocalBytes   int64
	RecorderSize int // candidate keys detection tracks by name (see Config.RecorderSize)
	// KeysTooLong counts the times a key read often enough to be tracked
	// was refused because its name alone is longer than detection holds
	// (a sixteenth of its byte budget: 13,232 bytes at the default
	// recorder_size). Such a key never becomes hot: every read of it goes
	// to Redis. The first is logged.
	KeysTooLong  uint64
	RegistrySize int // hot keys registered for refresh

	Promotions    uint64
	Demotions     uint64
	Refreshes     uint64 // successful reloads of hot keys
	RefreshErrors uint64
	// RedisErrors are the Redis commands that failed. A command whose
	// caller's context ended first (its deadline passed, or it was
	// cancelled) did not fail: its caller stopped waiting.
	RedisErrors  uint64
	DecodeErrors uint64

	Loads      uint64 // loader calls
	LoadErrors uint64 // loader calls that failed
	// StaleReads are reads answered from a local copy that no live
	// invalidation session vouched for, because Redis could not be asked
	// (stale-while-error; see docs/failures.md, "When Redis fails").
	StaleReads uint64
	// FailedFast counts calls refused without asking Redis, because a
	// recent call found it unreachable (see ErrUnavailable).
	FailedFast uint64
	// RedisDownSince is when a Redis node of the entity's keys was found
	// unreachable (the earliest, on a cluster): since then its hot keys
	// are served from memory and other calls fail fast, until it answers
	// again. Zero while every node answers.
	RedisDownSince time.Time
	// BigValues counts reads and writes of values above MaxValueBytes.
	BigValues uint64
	// DegradedLoads are loader calls made because Redis failed.
	DegradedLoads uint64

	// Invalidations count local copies marked unverified because their
	// key was written, here or by another instance or program: the next
	// read of each asks Redis.
	Invalidations uint64
	// InvalidationResets count losses of an invalidation session of the
	// client's (shared by every repository on it); until the next one
	// starts, the copies it covered are unverified.
	InvalidationResets uint64
	// InvalidationLive is the number of the client's invalidation
	// sessions up now: one per node copies of whose keys are kept.
	InvalidationLive int
	// Invalidation is the invalidation mode in effect: InvalidateTracking,
	// InvalidatePubSubKeys, config.InvalidatePubSub (also when the server lacks
	// tracking, or RESP3 for key channels, and the Cache fell back to it),
	// or config.InvalidateOff.
	Invalidation string
	// InvalidationDownSince is when invalidation of some of the entity's
	// keys stopped: the earliest loss of a session not yet re-established,
	// or when a node's first copy wanted a session that is still
	// connecting. Zero while every session wanted is live, and with
	// config.InvalidateOff.
	InvalidationDownSince time.Time

	// AggregateReports are the slots this instance reported to cluster-wide
	// detection; AggregateErrors the reports and readings that failed
	// (reads are never affected).
	AggregateReports uint64
	AggregateErrors  uint64

	// Changes describes the change buffer (changes=on), Bloom the Bloom
	// filter (bloom=on); zero when off.
	Changes ChangeStats
	Bloom   BloomStats
}

// ReadOutcomes counts reads by Outcome.
type ReadOutcomes struct {
	Local      uint64 // from a vouched local copy
	Redis      uint64 // by Redis, with a value or its absence
	Loaded     uint64 // by the load, after Redis missed
	Stale      uint64 // from an unvouched local copy, Redis being unreachable
	FailedFast uint64 // refused at once, Redis being unreachable
	Failed     uint64 // with any other error
	Canceled   uint64 // unanswered: the caller's context ended first
}

// Of returns the count of o.
func (r ReadOutcomes) Of(o Outcome) uint64 {
	return [nOutcomes]uint64{r.Local, r.Redis, r.Loaded, r.Stale, r.FailedFast, r.Failed, r.Canceled}[o]
}

// outcomes counts every read by outcome: the reads that went to Redis
// as each ended (counters.away), and the local hits, hits, less those
// served stale without going to Redis (staleReads counts both kinds).
func (c *Cache[K, V]) outcomes(hits uint64) ReadOutcomes {
	var a [nOutcomes]uint64
	for i := range a {
		a[i] = c.count.away[i].Load()
	}
	stale := c.count.staleReads.Load()
	staleHits := stale - min(stale, a[Stale])
	return ReadOutcomes{Local: hits - min(hits, staleHits) + a[Local], Redis: a[Redis], Loaded: a[Loaded],
		Stale: stale, FailedFast: a[FailedFast], Failed: a[Failed], Canceled: a[Canceled]}
}

// HotKey describes one key in the hot set.
type HotKey struct {
	Key string
	// QPS is the key's rate on this instance: the higher of KeyRate.QPS
	// and Burst.
	QPS float64
	// ClusterQPS is the key's rate summed over every replica in the last
	// window they all reported, with Config.Aggregate on; 0 otherwise, or
	// when this instance did not report the key.
	ClusterQPS float64
	Since      time.Time // when it was promoted
	// Hits counts the key's local hits since it was promoted, sampled one
	// in 16 and weighted, so it is exact in expectation.
	Hits uint64
}

// counters count what happens on the slow paths, each of which waits on
// Redis, so plain atomics cost nothing there. Local hits, the one fast path,
// are counted by theine's own striped counter.
type counters struct {
	fresh.Counts                              // invalidations, refresh errors
	cold, misses                              atomic.Uint64
	refreshes, redisErrors, decodeErrors      atomic.Uint64
	loads, loadErrors, staleReads, failedFast atomic.Uint64
	bigValues, degradedLoads                  atomic.Uint64
	aggregateReports, aggregateErrors         atomic.Uint64
	// away counts the outcomes of the reads that went to Redis (cold and
	// misses), each once, as it ends (see Outcomes).
	away [nOutcomes]atomic.Uint64
}

// InvalidationConnected reports whether writes made anywhere reach this
// instance's local copies now: invalidation is on and the session of
// every node a copy is kept of is live (a node of whose keys no copy is
// kept has none, and needs none).
func (s Stats) InvalidationConnected() bool {
	return s.Invalidation != config.InvalidateOff && s.InvalidationDownSince.IsZero()
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Stats is the runtime's Cache.Stats.
func (c *Cache[K, V]) Stats() Stats {
	reads, hits := c.reads()
	misses := c.count.misses.Load()
	hotAccesses := hits + misses
	hs := c.det.Set.Load()
	hot := make([]HotKey, 0, len(hs.ByKey))
	registered := 0
	cluster := c.det.ClusterRates()
	for k, e := range hs.ByKey {
		hot = append(hot, HotKey{Key: e.Key, QPS: c.det.Rec.Rate(k).Score(), ClusterQPS: cluster[k], Since: e.Since, Hits: e.Hits.Load()})
		if e.Refreshable() {
			registered++
		}
	}
	slices.SortFunc(hot, func(a, b HotKey) int {
		if c := cmp.Compare(b.QPS, a.QPS); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	redisDown, invalidationDown := c.downSince()
	st := Stats{
		Entity:                c.cfg.Entity,
		Version:               c.version,
		Host:                  hostname(),
		PID:                   os.Getpid(),
		Reads:                 reads,
		ReadsPerSec:           c.readsPerSec(),
		DistinctKeysPerSec:    c.det.Rec.DistinctPerSec(),
		HotAccesses:           hotAccesses,
		Hits:                  hits,
		Misses:                misses,
		HitRate:               ratio(hits, hotAccesses),
		TrafficShare:          ratio(hotAccesses, reads),
		HotKeys:               hot,
		Outcomes:              c.outcomes(hits),
		LocalSize:             c.copies.Local.Len(),
		LocalBytes:            c.localBytes(),
		RecorderSize:          c.det.Rec.Len(),
		KeysTooLong:           c.det.Rec.TooLong(),
		RegistrySize:          registered,
		Promotions:            c.det.Promotions.Load(),
		Demotions:             c.det.Demotions.Load(),
		Refreshes:             c.count.refreshes.Load(),
		RefreshErrors:         c.count.RefreshErrors.Load(),
		RedisErrors:           c.count.redisErrors.Load(),
		DecodeErrors:          c.count.decodeErrors.Load(),
		Loads:                 c.count.loads.Load(),
		LoadErrors:            c.count.loadErrors.Load(),
		StaleReads:            c.count.staleReads.Load(),
		FailedFast:            c.count.failedFast.Load(),
		RedisDownSince:        redisDown,
		BigValues:             c.count.bigValues.Load(),
		DegradedLoads:         c.count.degradedLoads.Load(),
		Invalidations:         c.count.Invalidations.Load(),
		InvalidationResets:    c.hub.Resets(),
		InvalidationLive:      c.hub.Live(),
		Invalidation:          c.hub.Mode(),
		InvalidationDownSince: invalidationDown,
		AggregateReports:      c.count.aggregateReports.Load(),
		AggregateErrors:       c.count.aggregateErrors.Load(),
	}
	changeStats(&st, c.chg, c.bloom)
	return st
}

// hostname is the machine's name, read once: Stats is read every second
// by pages and scrapes.
var hostname = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
})

// refuse counts a call refused because n is unreachable, and returns
// the cause of its error, for the caller to name the operation.
func (c *counters) refuse(n *track.Node) error {
	c.failedFast.Add(1)
	return n.Unavailable()
}

// redisError counts err, the failure of a command sent under ctx, as a
// Redis error (Stats.RedisErrors), unless it says only that ctx ended
// (breaker.RedisError). It reports whether err counted, for the callers
// that log what did.
func (c *counters) redisError(ctx context.Context, err error) bool {
	if !breaker.RedisError(ctx, err) {
		return false
	}
	c.redisErrors.Add(1)
	return true
}

// downSince returns when the earliest breaker of the entity's nodes opened
// and when the earliest of their sessions was lost: the zero time when
// none is. The nodes are the one source of both (their breakers,
// internal/fresh).
func (c *Cache[K, V]) downSince() (redis, invalidation time.Time) {
	earliest := func(t *time.Time, since time.Time) {
		if !since.IsZero() && (t.IsZero() || since.Before(*t)) {
			*t = since
		}
	}
	for _, n := range c.copies.Nodes.All() {
		earliest(&redis, n.UnreachableSince())
		earliest(&invalidation, n.UncoveredSince())
	}
	return redis, invalidation
}

// reads returns the total of reads, local hits plus the reads that went to
// Redis, and of those hits.
func (c *Cache[K, V]) reads() (reads, hits uint64) {
	// theine counts every hit; those passed over for being unverified
	// went to Redis and are counted as misses.
	passed := c.copies.PassedOver.Load() // first: each was a theine hit before
	hits = c.copies.Local.Stats().Hits()
	hits -= min(hits, passed)
	return hits + c.count.misses.Load() + c.count.cold.Load(), hits
}

// localBytes sums the encoded size of the local values, counted once
// when each was stored: a snapshot costs a walk of the hot set, not an
// encoding of every value.
func (c *Cache[K, V]) localBytes() int64 {
	var n int64
	c.copies.Local.Range(func(_ K, cp *fresh.Copy[V]) bool {
		n += int64(cp.Meta.Size)
		return true
	})
	return n
}

// History is the runtime's Cache.History.
func (c *Cache[K, V]) History() []Sample {
	rs := c.hist.Rates() // kept by runtime/internal/rates
	if rs == nil {
		return nil
	}
	out := make([]Sample, len(rs))
	for i, r := range rs {
		out[i] = Sample(r)
	}
	return out
}

// readsPerSec is the number of reads over the window's complete slots divided by
// the window; before a whole window has passed it counts from the start,
// so a fresh Cache never reports an inflated rate.
func (c *Cache[K, V]) readsPerSec() float64 {
	cur := c.det.Rec.Current()
	n := c.ticker.readSnaps[cur%detect.Ring].Load() - c.ticker.readSnaps[(cur+detect.Ring-detect.Slots)%detect.Ring].Load()
	return float64(n) / c.cfg.Window.Seconds()
}
