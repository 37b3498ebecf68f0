// Package config is the configuration of a Cache: every setting, its
// option (a row of the table in options.go: name, default, rules), the
// defaults that follow other settings, and Validate. The runtime re-exports
// what users name (Option, ConfigError, the modes and defaults), and its
// With functions set the rows; the engine reads a resolved Config.
package config

import (
	"log/slog"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/option"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// Config holds every knob of a Cache. Generated repositories start from
// DefaultConfig, apply the defaults written in the entity's annotation, then
// the caller's options, so a caller always has the last word.
type Config struct {
	// Entity names the cached type in stats and logs ("user").
	Entity string

	// TTL is the Redis expiry set on every write; 0 writes without expiry.
	TTL time.Duration

	// HotQPS is the per-instance rate at which a key becomes hot.
	HotQPS float64
	// WarmQPS is the rate below which a hot key is demoted. Keys between
	// WarmQPS and HotQPS keep their state, so a key does not flap.
	WarmQPS float64
	// TopN caps the number of hot keys of this entity.
	TopN int

	// Window is the sliding window over which access rates are measured.
	Window time.Duration
	// PromoteEvery and DemoteEvery pace the selector. Keys that burst far
	// above HotQPS are promoted inline, without waiting for a tick.
	PromoteEvery time.Duration
	DemoteEvery  time.Duration

	// LocalSize bounds the in-process store of hot values; LocalTTL expires
	// a local value after it was written, whatever happens to refresh.
	LocalSize int
	LocalTTL  time.Duration

	// Refresh reloads every hot key from Redis at this interval (0 disables).
	// After RefreshFailures consecutive failures a key's local copy is
	// dropped: data of unknown staleness must not be served forever.
	Refresh         time.Duration
	RefreshFailures int

	// RecorderSize bounds how many keys detection tracks by name, the
	// candidates among which hot keys are chosen; every other key is
	// counted by hash in a sketch of fixed size (see runtime/internal/detect), so the
	// memory detection takes does not grow with the keyspace. Candidates
	// not read for InactiveAfter are forgotten.
	RecorderSize  int
	InactiveAfter time.Duration

	// MonitorEvery logs one line of stats at this interval (0 disables).
	MonitorEvery time.Duration

	// NullTTL is how long an absent row, as the loader reported it, is
	// remembered in Redis with a placeholder so repeated reads of a missing
	// id do not reach the loader (0 disables).
	NullTTL time.Duration
	// Jitter spreads every write's TTL uniformly within ±Jitter of it, so
	// keys written together do not expire together.
	Jitter float64

	// RebuildLock makes every load take its key's lease first (on by
	// default; runtime/internal/lease): one process of all those sharing
	// the Redis runs the loader for a key while the others wait for its
	// row, and the row is written back only if no write or delete took
	// the key meanwhile, so a delete that follows a database update is
	// never undone by a load that read the row before it. RebuildLockTTL
	// is how long a lease holds: a process that finds one whose holder
	// died loads by itself once it expires. Off, a load writes back with
	// SET NX, and each process loads on its own (Redis before 7.0, which
	// lacks SET NX GET, needs it off).
	RebuildLock    bool
	RebuildLockTTL time.Duration

	// Degrade says what reads do when Redis fails: DegradeOff returns the
	// error, DegradeLoader asks the loader, at most DegradeLimit calls at
	// a time so the database is not flattened.
	Degrade      string
	DegradeLimit int
	// StaleReads serves a hot key's local copy that no session vouches for
	// while the key's node cannot be reached (killed, refused, hung, too
	// slow, partitioned away), counted as a stale read, so hot keys
	// outlive an outage; off, such reads fail like cold ones. A node this
	// instance alone cannot reach may still take other instances' writes:
	// its copies are then knowingly stale, until RefreshFailures refreshes
	// have failed and they are dropped. On by default: availability wins.
	StaleReads bool

	// AutoPipeline sends a read of one key (a cold Get's GET, HGETALL)
	// on one lane of the pool when no other read is there, and on the
	// client's automatic pipeline, go-redis's AutoPipeliner (its deferred
	// face, which the client owns and closes), when one is: reads that
	// wait together go out in one write, which cuts their tail on a
	// loaded machine, and the lane keeps the median of a read that would
	// wait for the batch in flight (BENCHMARKS.md, the load table). A hot
	// key's GET and PTTL, and every read when it is off, take a
	// connection of the pool. Only a single
	// server's client (a Sentinel's included) has one; a Redis Cluster's
	// reads always go through the pool. The pipeline is the client's: its
	// options (Options.AutoPipelineOptions) are the client's, shared with
	// the user's own use of it.
	AutoPipeline bool

	// MaxValueBytes is the encoded size above which reads and writes log a
	// warning (once per key per minute) and count a big value;
	// MaxValueBytesHard, when not 0, rejects larger writes.
	MaxValueBytes     int
	MaxValueBytesHard int

	// Invalidate says how writes reach other instances' local copies:
	// InvalidateTracking, InvalidatePubSub, InvalidatePubSubKeys or
	// InvalidateOff.
	Invalidate string

	// Aggregate adds cluster-wide detection to the per-instance kind: a key
	// read evenly by many replicas, each below HotQPS, is hot for all of
	// them once the reads of every replica sum to ClusterHotQPS. Each
	// replica reports its AggregateTop busiest keys of every slot to a
	// sorted set in Redis (see docs/detection.md, "Cluster-wide hot keys"), so
	// every replica must use the same Window.
	Aggregate bool
	// ClusterHotQPS is the cluster-wide rate that promotes a key; 0 means
	// HotQPS. A key promoted so stays hot while its cluster rate is at
	// least WarmQPS scaled the same way (WarmQPS*ClusterHotQPS/HotQPS), or
	// its own rate at least WarmQPS.
	ClusterHotQPS float64
	// AggregateTop bounds the keys a replica reports per slot, and so its
	// traffic to Redis: AggregateTop+1 commands per slot.
	AggregateTop int

	// Changes turns on the change buffer (changes.go): MarkChanged records
	// ids of rows changed in the database, and a sync worker reloads them
	// every SyncEvery, SyncBatch at a time, each claimed for SyncLease; the
	// buffer's keys expire SyncTTL after they were last touched.
	Changes   bool
	SyncEvery time.Duration
	SyncBatch int
	SyncLease time.Duration
	SyncTTL   time.Duration

	// Bloom puts a Bloom filter shared by every instance (changes.go) in
	// front of the loader, sized for BloomItems ids at a false-positive
	// rate of BloomFP.
	Bloom      bool
	BloomItems int
	BloomFP    float64

	// Given holds what the With functions were given that is no value
	// of a setting: the typed loaders and hook, which New checks against
	// the Cache's types, and what an option could not take.
	Given Given
	// Written records the settings an Option set, so that a default which
	// depends on another setting follows the value the caller chose (see
	// Resolved), and a contradiction blames only values someone wrote.
	Written option.Written
	// Test holds the seams of the runtime's own tests and benchmarks;
	// zero in every program.
	Test Hooks

	// Logger receives promotions, demotions, refresh failures and the
	// monitor line. Nil means slog.Default().
	Logger *slog.Logger
	// Clock drives every time-based decision. Nil means the wall clock.
	Clock Clock
}

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

// Defaults; the option table in docs/options.md lists the same values.
const (
	DefaultHotQPS          = 3000
	DefaultWarmQPS         = DefaultHotQPS / WarmRatio
	DefaultTopN            = 10
	DefaultWindow          = 10 * time.Second
	DefaultPromoteEvery    = 5 * time.Second
	DefaultDemoteEvery     = 60 * time.Second
	DefaultLocalSize       = 200
	DefaultLocalTTL        = 60 * time.Minute
	DefaultRefresh         = 10 * time.Second
	DefaultRefreshFailures = 3
	DefaultRecorderSize    = 1024
	DefaultInactiveAfter   = 300 * time.Second
	DefaultMonitorEvery    = 60 * time.Second
	DefaultNullTTL         = time.Minute
	DefaultJitter          = 0.05
	DefaultRebuildLockTTL  = 3 * time.Second
	DefaultDegradeLimit    = 8
	DefaultMaxValueBytes   = 10 << 10
	DefaultAggregateTop    = 50
	DefaultSyncEvery       = 3 * time.Second
	DefaultSyncBatch       = 500
	DefaultSyncLease       = 60 * time.Second
	DefaultSyncTTL         = 24 * time.Hour
	DefaultBloomItems      = 1_000_000
	DefaultBloomFP         = 0.01
)

// WarmRatio is how far below HotQPS a hot key must cool to be demoted when
// WarmQPS is not set: WarmQPS follows HotQPS / WarmRatio, the seed design's
// ratio, so tuning hot_qps alone keeps the two apart.
const WarmRatio = 6

// Layouts of an entity in Redis (the layout= option): a String per key,
// or a hash per owner holding a collection of items (NewCollection).
const (
	LayoutString = "string"
	LayoutHash   = "hash"
)

// Degradation modes.
const (
	DegradeOff    = "off"
	DegradeLoader = "loader"
)

// Default returns the configuration a Cache has when no option is given.
func Default() Config {
	var c Config
	Options.Defaults(&c)
	return c
}

// Option changes one setting of a Cache at construction.
type Option func(*Config)

// Given is what the With functions were given beside settings.
type Given struct {
	// Loader, BatchLoader and SyncHook are the typed functions given to
	// WithLoader, WithBatchLoader and WithSyncHook.
	Loader, BatchLoader, SyncHook any
	// Observer is what is told of every read and load (engine.Observer,
	// given by runtime/otel's Instrument).
	Observer any
	// Misused holds what an option was given that it cannot take (a nil
	// function, an empty name), for Validate to report with the rest.
	Misused []error
}

// Hooks are the seams of the runtime's tests and benchmarks.
type Hooks struct {
	// OnInvalidate sees every batch of invalidated keys.
	OnInvalidate func(keys []string)
	// ProbeLine stands between each breaker and the line its watcher
	// pings on, to hold or cut it (track.Options.Line).
	ProbeLine func(breaker.Line) breaker.Line
	// TopologyEvery paces the reading of a cluster's topology; 0 means
	// the transport's pace.
	TopologyEvery time.Duration
	// TrackVia stands between a keyed node's Track and its session
	// (track.Options.Track).
	TrackVia func(keys []string, track func(keys []string))
	// Linger is how long a node's session outlives the last copy of its
	// keys; 0 means the transport's default.
	Linger time.Duration
	// Piped, for the load table's reference, sends every read of one
	// command on the pipeline (WithEveryReadPiped).
	Piped bool
}
