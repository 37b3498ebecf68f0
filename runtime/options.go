package runtime

import (
	"context"
	"log/slog"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
)

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
	return func(c *Config) { c.Given.Misused = append(c.Given.Misused, &ConfigError{Option: option, Msg: msg}) }
}

// WithTTL sets the Redis expiry of writes (0: none).
func WithTTL(d time.Duration) Option { return config.TTL.With(d) }

// WithHotQPS sets the promotion threshold.
func WithHotQPS(qps float64) Option { return config.HotQPS.With(qps) }

// WithWarmQPS sets the demotion threshold.
func WithWarmQPS(qps float64) Option { return config.WarmQPS.With(qps) }

// WithTopN caps the number of hot keys.
func WithTopN(n int) Option { return config.TopN.With(n) }

// WithWindow sets the detection window.
func WithWindow(d time.Duration) Option { return config.Window.With(d) }

// WithPromoteEvery sets the promotion tick.
func WithPromoteEvery(d time.Duration) Option { return config.PromoteEvery.With(d) }

// WithDemoteEvery sets the demotion tick.
func WithDemoteEvery(d time.Duration) Option { return config.DemoteEvery.With(d) }

// WithLocalSize bounds the local store.
func WithLocalSize(n int) Option { return config.LocalSize.With(n) }

// WithLocalTTL sets how long a local value lives after it was written.
func WithLocalTTL(d time.Duration) Option { return config.LocalTTL.With(d) }

// WithRefresh sets the reload interval of hot keys (0 disables).
func WithRefresh(d time.Duration) Option { return config.Refresh.With(d) }

// WithRefreshFailures sets how many consecutive reload failures drop a
// local copy.
func WithRefreshFailures(n int) Option { return config.RefreshFailures.With(n) }

// WithRecorderSize bounds the number of keys detection tracks by name.
func WithRecorderSize(n int) Option { return config.RecorderSize.With(n) }

// WithInactiveAfter sets when an idle key is forgotten by detection.
func WithInactiveAfter(d time.Duration) Option { return config.InactiveAfter.With(d) }

// WithMonitorEvery sets the interval of the stats log line (0 disables).
func WithMonitorEvery(d time.Duration) Option { return config.MonitorEvery.With(d) }

// WithNullTTL sets how long an absent row is remembered (0: not at all).
func WithNullTTL(d time.Duration) Option { return config.NullTTL.With(d) }

// WithJitter sets the fraction by which write TTLs are spread.
func WithJitter(f float64) Option { return config.Jitter.With(f) }

// WithRebuildLock turns the loads' leases on or off (on by default; see
// Config.RebuildLock).
func WithRebuildLock(on bool) Option { return config.RebuildLock.With(on) }

// WithRebuildLockTTL sets how long a load's lease holds before a waiting
// process loads by itself (see Config.RebuildLock).
func WithRebuildLockTTL(d time.Duration) Option { return config.RebuildLockTTL.With(d) }

// WithDegrade sets what reads do when Redis fails: DegradeOff or
// DegradeLoader.
func WithDegrade(mode string) Option { return config.Degrade.With(mode) }

// WithStaleReads sets whether hot keys are served from their local copies
// while Redis cannot be reached (see Config.StaleReads).
func WithStaleReads(on bool) Option { return config.StaleReads.With(on) }

// WithAutoPipeline sets whether the reads of one key go through the
// client's automatic pipeline (see Config.AutoPipeline).
func WithAutoPipeline(on bool) Option { return config.AutoPipeline.With(on) }

// WithDegradeLimit bounds concurrent loader calls made because Redis
// failed.
func WithDegradeLimit(n int) Option { return config.DegradeLimit.With(n) }

// WithMaxValueBytes sets the size above which values are warned about.
func WithMaxValueBytes(n int) Option { return config.MaxValueBytes.With(n) }

// WithMaxValueBytesHard sets the size above which writes are rejected (0:
// no limit).
func WithMaxValueBytesHard(n int) Option { return config.MaxValueBytesHard.With(n) }

// WithInvalidate sets how writes reach other instances' local copies:
// InvalidateTracking, InvalidatePubSub, InvalidatePubSubKeys or
// InvalidateOff.
func WithInvalidate(mode string) Option { return config.Invalidate.With(mode) }

// WithAggregate turns cluster-wide detection on or off (see
// Config.Aggregate).
func WithAggregate(on bool) Option { return config.Aggregate.With(on) }

// WithClusterHotQPS sets the cluster-wide rate that promotes a key (0:
// HotQPS).
func WithClusterHotQPS(qps float64) Option { return config.ClusterHotQPS.With(qps) }

// WithAggregateTop bounds the keys a replica reports per slot.
func WithAggregateTop(n int) Option { return config.AggregateTop.With(n) }

// WithChanges turns the change buffer on or off (see Config.Changes).
func WithChanges(on bool) Option { return config.Changes.With(on) }

// WithSyncEvery sets how often the sync worker claims a batch of changes.
func WithSyncEvery(d time.Duration) Option { return config.SyncEvery.With(d) }

// WithSyncBatch sets how many changed ids the sync worker claims at once.
func WithSyncBatch(n int) Option { return config.SyncBatch.With(n) }

// WithSyncLease sets how long a claim holds before a worker that did not
// acknowledge it is presumed dead and its ids return to the buffer.
func WithSyncLease(d time.Duration) Option { return config.SyncLease.With(d) }

// WithSyncTTL sets the expiry of the change buffer's keys, renewed by every
// mark and claim: a safety net for buffers no program serves any more.
func WithSyncTTL(d time.Duration) Option { return config.SyncTTL.With(d) }

// WithSyncHook gives the sync worker a function that receives every batch
// it synced: each id with its row, nil when the row is gone. An error
// returns the batch to the buffer, to be synced again. Its types must
// match the Cache's, or New fails.
func WithSyncHook[K comparable, V any](hook func(ctx context.Context, rows map[K]*V) error) Option {
	if hook == nil {
		return misuse("sync hook", "WithSyncHook was given a nil function; pass a hook, or leave the option out")
	}
	return func(c *Config) { c.Given.SyncHook = hook }
}

// WithBloom turns the Bloom filter in front of the loader on or off (see
// Config.Bloom).
func WithBloom(on bool) Option { return config.Bloom.With(on) }

// WithBloomItems sets how many ids the Bloom filter is sized for.
func WithBloomItems(n int) Option { return config.BloomItems.With(n) }

// WithBloomFP sets the Bloom filter's false-positive rate at BloomItems ids.
func WithBloomFP(p float64) Option { return config.BloomFP.With(p) }

// WithLoader reads through to the source of truth: on a Redis miss the
// Cache calls load, writes what it returns to Redis and returns it. load
// returns an error wrapping ErrNotFound for an absent row. Concurrent
// misses of one key in one process call it once. Its types must match the
// Cache's key and value types, or New fails.
func WithLoader[K comparable, V any](load func(ctx context.Context, k K) (*V, error)) Option {
	if load == nil {
		return misuse("loader", "WithLoader was given a nil function; pass a loader, or leave the option out")
	}
	return func(c *Config) { c.Given.Loader = load }
}

// WithBatchLoader is WithLoader for GetMany: the keys missing from Redis
// are loaded in one call, which returns the rows it found. GetMany falls
// back to the single loader without it; given alone, it is also Get's and
// View's loader, called with one key.
func WithBatchLoader[K comparable, V any](load func(ctx context.Context, ks []K) (map[K]*V, error)) Option {
	if load == nil {
		return misuse("batch loader", "WithBatchLoader was given a nil function; pass a batch loader, or leave the option out")
	}
	return func(c *Config) { c.Given.BatchLoader = load }
}

// WithLogger sends the runtime's logs to l.
func WithLogger(l *slog.Logger) Option { return func(c *Config) { c.Logger = l } }
