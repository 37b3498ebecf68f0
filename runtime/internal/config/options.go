package config

import (
	"fmt"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/option"
	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
)

// The options, each declared once: its name in directives and errors, the
// Config field it sets, its default and the rules its value alone must
// keep. DefaultConfig, the With functions, Validate's record of what was
// written, the annotations' table, the generator's option calls and (by a
// test) the option table of docs/options.md all follow from these rows;
// the rules relating two options are in Validate. Adding an option takes a row, its
// Config field and its With function ("With"+field, returning the row's
// With), and a Default constant when users need to see the value; a test
// (options_test.go) checks that each With function and row agree. Why a
// row and not a struct tag: a row can hold the default and the rules as
// Go values the compiler checks, and annotations and the generator, which
// cannot see this package's unexported names, read a copy (internal/option,
// whose Table is also the machinery of the rows).
var (
	TTL               = Options.Duration("ttl", "TTL", 0, option.Disables, option.Expiry)
	HotQPS            = Options.Rate("hot_qps", "HotQPS", DefaultHotQPS, positiveRate)
	WarmQPS           = Options.Rate("warm_qps", "WarmQPS", DefaultWarmQPS, positiveRate)
	TopN              = Options.Count("top_n", "TopN", DefaultTopN, option.Positive)
	Window            = Options.Duration("window", "Window", DefaultWindow, option.PositiveDuration, slotsOfAMillisecond)
	PromoteEvery      = Options.Duration("promote_every", "PromoteEvery", DefaultPromoteEvery, option.PositiveDuration)
	DemoteEvery       = Options.Duration("demote_every", "DemoteEvery", DefaultDemoteEvery, option.PositiveDuration)
	LocalSize         = Options.Count("local_size", "LocalSize", DefaultLocalSize, option.Positive)
	LocalTTL          = Options.Duration("local_ttl", "LocalTTL", DefaultLocalTTL, option.PositiveDuration)
	Refresh           = Options.Duration("refresh", "Refresh", DefaultRefresh, option.Disables)
	RefreshFailures   = Options.Count("refresh_failures", "RefreshFailures", DefaultRefreshFailures, option.Positive)
	RecorderSize      = Options.Count("recorder_size", "RecorderSize", DefaultRecorderSize, option.Positive)
	InactiveAfter     = Options.Duration("inactive_after", "InactiveAfter", DefaultInactiveAfter, option.PositiveDuration)
	MonitorEvery      = Options.Duration("monitor_every", "MonitorEvery", DefaultMonitorEvery, option.Disables).ProgramOnly()
	NullTTL           = Options.Duration("null_ttl", "NullTTL", DefaultNullTTL, option.Disables, option.Expiry)
	Jitter            = Options.Fraction("jitter", "Jitter", DefaultJitter, option.BelowOne)
	RebuildLock       = Options.Toggle("rebuild_lock", "RebuildLock", true)
	RebuildLockTTL    = Options.Duration("rebuild_lock_ttl", "RebuildLockTTL", DefaultRebuildLockTTL, option.AMillisecond).ProgramOnly()
	Degrade           = Options.Choice("degrade", "Degrade", DegradeOff, word(DegradeOff, "DegradeOff"), word(DegradeLoader, "DegradeLoader"))
	DegradeLimit      = Options.Count("degrade_limit", "DegradeLimit", DefaultDegradeLimit, option.Positive).ProgramOnly()
	StaleReads        = Options.Toggle("stale_reads", "StaleReads", true)
	AutoPipeline      = Options.Toggle("auto_pipeline", "AutoPipeline", true).ProgramOnly()
	Invalidate        = Options.Choice("invalidate", "Invalidate", InvalidateTracking, word(InvalidateTracking, "InvalidateTracking"), word(InvalidatePubSub, "InvalidatePubSub"), word(InvalidatePubSubKeys, "InvalidatePubSubKeys"), word(InvalidateOff, "InvalidateOff"))
	MaxValueBytes     = Options.Size("max_value_bytes", "MaxValueBytes", DefaultMaxValueBytes, notNegative[int]("0 disables the warning"))
	MaxValueBytesHard = Options.Size("max_value_bytes_hard", "MaxValueBytesHard", 0, notNegative[int]("0 disables the limit"))
	Aggregate         = Options.Toggle("aggregate", "Aggregate", false)
	ClusterHotQPS     = Options.Rate("cluster_hot_qps", "ClusterHotQPS", 0, notNegative[float64]("0 means hot_qps"))
	AggregateTop      = Options.Count("aggregate_top", "AggregateTop", DefaultAggregateTop, option.Positive).ProgramOnly()
	Changes           = Options.Toggle("changes", "Changes", false)
	SyncEvery         = Options.Duration("sync_every", "SyncEvery", DefaultSyncEvery, option.PositiveDuration)
	SyncBatch         = Options.Count("sync_batch", "SyncBatch", DefaultSyncBatch, option.Positive)
	SyncLease         = Options.Duration("sync_lease", "SyncLease", DefaultSyncLease, option.AMillisecond)
	SyncTTL           = Options.Duration("sync_ttl", "SyncTTL", DefaultSyncTTL)
	Bloom             = Options.Toggle("bloom", "Bloom", false)
	BloomItems        = Options.Count("bloom_items", "BloomItems", DefaultBloomItems, option.Positive)
	BloomFP           = Options.Fraction("bloom_fp", "BloomFP", DefaultBloomFP, betweenZeroAndOne)
)

// options lists the rows above in their order, which is the order of
// Validate's checks of single values. Each row is added as the package's
// variables are initialized, so no package-level variable may call
// DefaultConfig or Validate.
var Options = option.NewTable[Config, Option](
	func(c *Config) *option.Written { return &c.Written },
	func(name, msg string) error { return &Error{Option: name, Msg: msg} },
)

// word is a value of a choice, and the name of the runtime's constant
// holding it, which generated code writes.
func word(text, constant string) option.Word { return option.Word{Text: text, Const: constant} }

func init() { option.Publish(Options.Rows()) }

// slotsOfAMillisecond is the window's rule: each of its slots lasts a
// millisecond at least.
func slotsOfAMillisecond(d time.Duration) string {
	if d > 0 && d < detect.Slots*time.Millisecond {
		return fmt.Sprintf("must be at least %v so each of its %d slots lasts a millisecond, got %v", detect.Slots*time.Millisecond, detect.Slots, d)
	}
	return ""
}

// positiveRate is the rule of a rate that must be above 0 (NaN is not).
func positiveRate(f float64) string {
	if !(f > 0) {
		return fmt.Sprintf("must be positive, got %v", f)
	}
	return ""
}

// notNegative is the rule of a size or a rate that may be 0, which
// means what zero says.
func notNegative[T int | float64](zero string) func(T) string {
	return func(v T) string {
		if !(v >= 0) { // NaN too
			return fmt.Sprintf("must not be negative (%s), got %v", zero, v)
		}
		return ""
	}
}

// betweenZeroAndOne is the rule of a probability: bloom_fp's.
func betweenZeroAndOne(f float64) string {
	if !(f > 0 && f < 1) {
		return fmt.Sprintf("must be a fraction between 0 and 1, as in 0.01 or 1%%, got %v", f)
	}
	return ""
}
