package runtime

import "github.com/hotkeygen/hotkeygen/runtime/internal/config"

// Config holds every setting of a Cache (runtime/internal/config says
// what each does). Options set it; hotkeygen's own tools read it, to
// check an annotation's options as New would.
type Config = config.Config

// Option changes one setting of a Cache at construction.
type Option = config.Option

// ConfigError reports one invalid setting. Option is the annotation
// option's name ("warm_qps"), so the generator can point at the offending
// argument.
type ConfigError = config.Error

// DefaultConfig returns the configuration a Cache has when no option is
// given.
func DefaultConfig() Config { return config.Default() }

// Invalidation modes, WithInvalidate's values: how a write on any
// instance, or by any other writer, reaches the local copies of every
// instance (docs/options.md).
const (
	InvalidateTracking   = config.InvalidateTracking
	InvalidatePubSub     = config.InvalidatePubSub
	InvalidatePubSubKeys = config.InvalidatePubSubKeys
	InvalidateOff        = config.InvalidateOff
)

// Degradation modes, WithDegrade's values: what reads do when Redis fails.
const (
	DegradeOff    = config.DegradeOff
	DegradeLoader = config.DegradeLoader
)

// Layouts of an entity in Redis (the layout= option): a String per key,
// or a hash per owner holding a collection of items (NewCollection).
const (
	LayoutString = config.LayoutString
	LayoutHash   = config.LayoutHash
)

// Defaults; the option table in docs/options.md lists the same values.
const (
	DefaultHotQPS          = config.DefaultHotQPS
	DefaultWarmQPS         = config.DefaultWarmQPS
	DefaultTopN            = config.DefaultTopN
	DefaultWindow          = config.DefaultWindow
	DefaultPromoteEvery    = config.DefaultPromoteEvery
	DefaultDemoteEvery     = config.DefaultDemoteEvery
	DefaultLocalSize       = config.DefaultLocalSize
	DefaultLocalTTL        = config.DefaultLocalTTL
	DefaultRefresh         = config.DefaultRefresh
	DefaultRefreshFailures = config.DefaultRefreshFailures
	DefaultRecorderSize    = config.DefaultRecorderSize
	DefaultInactiveAfter   = config.DefaultInactiveAfter
	DefaultMonitorEvery    = config.DefaultMonitorEvery
	DefaultNullTTL         = config.DefaultNullTTL
	DefaultJitter          = config.DefaultJitter
	DefaultRebuildLockTTL  = config.DefaultRebuildLockTTL
	DefaultDegradeLimit    = config.DefaultDegradeLimit
	DefaultMaxValueBytes   = config.DefaultMaxValueBytes
	DefaultAggregateTop    = config.DefaultAggregateTop
	DefaultSyncEvery       = config.DefaultSyncEvery
	DefaultSyncBatch       = config.DefaultSyncBatch
	DefaultSyncLease       = config.DefaultSyncLease
	DefaultSyncTTL         = config.DefaultSyncTTL
	DefaultBloomItems      = config.DefaultBloomItems
	DefaultBloomFP         = config.DefaultBloomFP
)

// WarmRatio is how far below HotQPS a hot key must cool to be demoted when
// WarmQPS is not set: WarmQPS follows HotQPS / WarmRatio.
const WarmRatio = config.WarmRatio
