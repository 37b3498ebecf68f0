package runtime

import (
	"context"
	"log/slog"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/option"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
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

	// syncHook is the typed function given to WithSyncHook.
	syncHook any

	// misused holds what an option was given that it cannot take (a nil
	// function, an empty name), for Validate to report with the rest.
	misused []error

	// written records the settings an Option set, so that a default which
	// depends on another setting follows the value the caller chose (see
	// resolved), and a contradiction blames only values someone wrote.
	written option.Written

	// piped, for the load table's reference, sends every read of one
	// command on the pipeline (see WithEveryReadPiped).
	piped bool

	// onInvalidate, for tests, sees every batch of invalidated keys.
	onInvalidate func(keys []string)
	// probeLine, for tests, stands between each breaker and the line its
	// watcher pings on, to hold or cut it (track.Options.Line).
	probeLine func(breaker.Line) breaker.Line
	// topologyEvery, for tests, paces the reading of a cluster's
	// topology; 0 means topologyEvery, and topologyEveryDown while a
	// master is unreachable.
	topologyEvery time.Duration
	// trackVia, for tests, stands between a keyed node's Track and its
	// session (track.Options.Track).
	trackVia func(keys []string, track func(keys []string))
	// linger, for tests, is how long a node's session outlives the last
	// copy of its keys; 0 means the transport's default.
	linger time.Duration

	// loader and batchLoader are the typed functions given to WithLoader
	// and WithBatchLoader; New checks their types against the Cache's.
	loader, batchLoader any

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

// DefaultConfig returns the configuration a Cache has when no option is given.
func DefaultConfig() Config {
	var c Config
	options.Defaults(&c)
	return c
}

// Option changes one setting of a Cache at construction.
type Option func(*Config)

// WithEntity names the entity in stats and logs.
func WithEntity(name string) Option {
	if name == "" {
		return misuse("entity", "WithEntity was given an empty name; name the entity, or leave the option out")
	}
	return func(c *Config) { c.Entity = name }
}

// misuse is the Option of a With function given what it cannot take: it
// sets nothing, and Validate reports msg as option's error.
func misuse(option, msg string) Option {
	return func(c *Config) { c.misused = append(c.misused, &ConfigError{Option: option, Msg: msg}) }
}

// WithTTL sets the Redis expiry of writes (0: none).
func WithTTL(d time.Duration) Option { return optTTL.With(d) }

// WithHotQPS sets the promotion threshold.
func WithHotQPS(qps float64) Option { return optHotQPS.With(qps) }

// WithWarmQPS sets the demotion threshold.
func WithWarmQPS(qps float64) Option { return optWarmQPS.With(qps) }

// WithTopN caps the number of hot keys.
func WithTopN(n int) Option { return optTopN.With(n) }

// WithWindow sets the detection window.
func WithWindow(d time.Duration) Option { return optWindow.With(d) }

// WithPromoteEvery sets the promotion tick.
func WithPromoteEvery(d time.Duration) Option { return optPromoteEvery.With(d) }

// WithDemoteEvery sets the demotion tick.
func WithDemoteEvery(d time.Duration) Option { return optDemoteEvery.With(d) }

// WithLocalSize bounds the local store.
func WithLocalSize(n int) Option { return optLocalSize.With(n) }

// WithLocalTTL sets how long a local value lives after it was written.
func WithLocalTTL(d time.Duration) Option { return optLocalTTL.With(d) }

// WithRefresh sets the reload interval of hot keys (0 disables).
func WithRefresh(d time.Duration) Option { return optRefresh.With(d) }

// WithRefreshFailures sets how many consecutive reload failures drop a
// local copy.
func WithRefreshFailures(n int) Option { return optRefreshFailures.With(n) }

// WithRecorderSize bounds the number of keys detection tracks by name.
func WithRecorderSize(n int) Option { return optRecorderSize.With(n) }

// WithInactiveAfter sets when an idle key is forgotten by detection.
func WithInactiveAfter(d time.Duration) Option { return optInactiveAfter.With(d) }

// WithMonitorEvery sets the interval of the stats log line (0 disables).
func WithMonitorEvery(d time.Duration) Option { return optMonitorEvery.With(d) }

// WithNullTTL sets how long an absent row is remembered (0: not at all).
func WithNullTTL(d time.Duration) Option { return optNullTTL.With(d) }

// WithJitter sets the fraction by which write TTLs are spread.
func WithJitter(f float64) Option { return optJitter.With(f) }

// WithRebuildLock turns the loads' leases on or off (on by default; see
// Config.RebuildLock).
func WithRebuildLock(on bool) Option { return optRebuildLock.With(on) }

// WithRebuildLockTTL sets how long a load's lease holds before a waiting
// process loads by itself (see Config.RebuildLock).
func WithRebuildLockTTL(d time.Duration) Option { return optRebuildLockTTL.With(d) }

// WithDegrade sets what reads do when Redis fails: DegradeOff or
// DegradeLoader.
func WithDegrade(mode string) Option { return optDegrade.With(mode) }

// WithStaleReads sets whether hot keys are served from their local copies
// while Redis cannot be reached (see Config.StaleReads).
func WithStaleReads(on bool) Option { return optStaleReads.With(on) }

// WithAutoPipeline sets whether the reads of one key go through the
// client's automatic pipeline (see Config.AutoPipeline).
func WithAutoPipeline(on bool) Option { return optAutoPipeline.With(on) }

// way is how the reads of one key travel (see Config.AutoPipeline).
func (c Config) way() send.Way {
	switch {
	case !c.AutoPipeline:
		return send.Pooled
	case c.piped:
		return send.Piped
	}
	return send.Lane
}

// WithDegradeLimit bounds concurrent loader calls made because Redis
// failed.
func WithDegradeLimit(n int) Option { return optDegradeLimit.With(n) }

// WithMaxValueBytes sets the size above which values are warned about.
func WithMaxValueBytes(n int) Option { return optMaxValueBytes.With(n) }

// WithMaxValueBytesHard sets the size above which writes are rejected (0:
// no limit).
func WithMaxValueBytesHard(n int) Option { return optMaxValueBytesHard.With(n) }

// WithInvalidate sets how writes reach other instances' local copies:
// InvalidateTracking, InvalidatePubSub, InvalidatePubSubKeys or
// InvalidateOff.
func WithInvalidate(mode string) Option { return optInvalidate.With(mode) }

// WithAggregate turns cluster-wide detection on or off (see
// Config.Aggregate).
func WithAggregate(on bool) Option { return optAggregate.With(on) }

// WithClusterHotQPS sets the cluster-wide rate that promotes a key (0:
// HotQPS).
func WithClusterHotQPS(qps float64) Option { return optClusterHotQPS.With(qps) }

// WithAggregateTop bounds the keys a replica reports per slot.
func WithAggregateTop(n int) Option { return optAggregateTop.With(n) }

// WithChanges turns the change buffer on or off (see Config.Changes).
func WithChanges(on bool) Option { return optChanges.With(on) }

// WithSyncEvery sets how often the sync worker claims a batch of changes.
func WithSyncEvery(d time.Duration) Option { return optSyncEvery.With(d) }

// WithSyncBatch sets how many changed ids the sync worker claims at once.
func WithSyncBatch(n int) Option { return optSyncBatch.With(n) }

// WithSyncLease sets how long a claim holds before a worker that did not
// acknowledge it is presumed dead and its ids return to the buffer.
func WithSyncLease(d time.Duration) Option { return optSyncLease.With(d) }

// WithSyncTTL sets the expiry of the change buffer's keys, renewed by every
// mark and claim: a safety net for buffers no program serves any more.
func WithSyncTTL(d time.Duration) Option { return optSyncTTL.With(d) }

// WithSyncHook gives the sync worker a function that receives every batch
// it synced: each id with its row, nil when the row is gone. An error
// returns the batch to the buffer, to be synced again. Its types must
// match the Cache's, or New fails.
func WithSyncHook[K comparable, V any](hook func(ctx context.Context, rows map[K]*V) error) Option {
	if hook == nil {
		return misuse("sync hook", "WithSyncHook was given a nil function; pass a hook, or leave the option out")
	}
	return func(c *Config) { c.syncHook = hook }
}

// WithBloom turns the Bloom filter in front of the loader on or off (see
// Config.Bloom).
func WithBloom(on bool) Option { return optBloom.With(on) }

// WithBloomItems sets how many ids the Bloom filter is sized for.
func WithBloomItems(n int) Option { return optBloomItems.With(n) }

// WithBloomFP sets the Bloom filter's false-positive rate at BloomItems ids.
func WithBloomFP(p float64) Option { return optBloomFP.With(p) }

// WithLoader reads through to the source of truth: on a Redis miss the
// Cache calls load, writes what it returns to Redis and returns it. load
// returns an error wrapping ErrNotFound for an absent row. Concurrent
// misses of one key in one process call it once. Its types must match the
// Cache's key and value types, or New fails.
func WithLoader[K comparable, V any](load func(ctx context.Context, k K) (*V, error)) Option {
	if load == nil {
		return misuse("loader", "WithLoader was given a nil function; pass a loader, or leave the option out")
	}
	return func(c *Config) { c.loader = load }
}

// WithBatchLoader is WithLoader for GetMany: the keys missing from Redis
// are loaded in one call, which returns the rows it found. GetMany falls
// back to the single loader without it; given alone, it is also Get's and
// View's loader, called with one key.
func WithBatchLoader[K comparable, V any](load func(ctx context.Context, ks []K) (map[K]*V, error)) Option {
	if load == nil {
		return misuse("batch loader", "WithBatchLoader was given a nil function; pass a batch loader, or leave the option out")
	}
	return func(c *Config) { c.batchLoader = load }
}

// WithLogger sends the runtime's logs to l.
func WithLogger(l *slog.Logger) Option { return func(c *Config) { c.Logger = l } }

// WithClock replaces the wall clock, for tests.
func WithClock(clk Clock) Option { return func(c *Config) { c.Clock = clk } }
