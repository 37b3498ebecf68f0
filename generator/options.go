package generator

import (
	"fmt"
	"time"

	"github.com/hotkeygen/hotkeygen/annotations"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// runtimeOption names the runtime.Option function an annotation option
// turns into, and reads the option's parsed value from the Spec.
type runtimeOption struct {
	Func  string
	Value func(*annotations.Spec) any // see option.Value
}

// runtimeOptions maps every annotation option that configures the cache
// to its runtime option. key and name shape the generated code instead.
// An option annotations accepts but this table lacks is an error at the
// option, never silently dropped: the table and the annotations registry
// must grow together (options_test.go checks both ways).
var runtimeOptions = map[string]runtimeOption{
	"ttl":                  {"WithTTL", func(s *annotations.Spec) any { return s.TTL }},
	"hot_qps":              {"WithHotQPS", func(s *annotations.Spec) any { return s.HotQPS }},
	"warm_qps":             {"WithWarmQPS", func(s *annotations.Spec) any { return s.WarmQPS }},
	"top_n":                {"WithTopN", func(s *annotations.Spec) any { return s.TopN }},
	"window":               {"WithWindow", func(s *annotations.Spec) any { return s.Window }},
	"promote_every":        {"WithPromoteEvery", func(s *annotations.Spec) any { return s.PromoteEvery }},
	"demote_every":         {"WithDemoteEvery", func(s *annotations.Spec) any { return s.DemoteEvery }},
	"local_size":           {"WithLocalSize", func(s *annotations.Spec) any { return s.LocalSize }},
	"local_ttl":            {"WithLocalTTL", func(s *annotations.Spec) any { return s.LocalTTL }},
	"refresh":              {"WithRefresh", func(s *annotations.Spec) any { return s.Refresh }},
	"refresh_failures":     {"WithRefreshFailures", func(s *annotations.Spec) any { return s.RefreshFailures }},
	"recorder_size":        {"WithRecorderSize", func(s *annotations.Spec) any { return s.RecorderSize }},
	"inactive_after":       {"WithInactiveAfter", func(s *annotations.Spec) any { return s.InactiveAfter }},
	"null_ttl":             {"WithNullTTL", func(s *annotations.Spec) any { return s.NullTTL }},
	"jitter":               {"WithJitter", func(s *annotations.Spec) any { return s.Jitter }},
	"rebuild_lock":         {"WithRebuildLock", func(s *annotations.Spec) any { return s.RebuildLock }},
	"degrade":              {"WithDegrade", func(s *annotations.Spec) any { return modeConst(s.Degrade) }},
	"stale_reads":          {"WithStaleReads", func(s *annotations.Spec) any { return s.StaleReads }},
	"invalidate":           {"WithInvalidate", func(s *annotations.Spec) any { return modeConst(s.Invalidate) }},
	"max_value_bytes":      {"WithMaxValueBytes", func(s *annotations.Spec) any { return s.MaxValueBytes }},
	"max_value_bytes_hard": {"WithMaxValueBytesHard", func(s *annotations.Spec) any { return s.MaxValueBytesHard }},
	"aggregate":            {"WithAggregate", func(s *annotations.Spec) any { return s.Aggregate }},
	"cluster_hot_qps":      {"WithClusterHotQPS", func(s *annotations.Spec) any { return s.ClusterHotQPS }},
	"changes":              {"WithChanges", func(s *annotations.Spec) any { return s.Changes }},
	"sync_every":           {"WithSyncEvery", func(s *annotations.Spec) any { return s.SyncEvery }},
	"sync_batch":           {"WithSyncBatch", func(s *annotations.Spec) any { return s.SyncBatch }},
	"sync_lease":           {"WithSyncLease", func(s *annotations.Spec) any { return s.SyncLease }},
	"sync_ttl":             {"WithSyncTTL", func(s *annotations.Spec) any { return s.SyncTTL }},
	"bloom":                {"WithBloom", func(s *annotations.Spec) any { return s.Bloom }},
	"bloom_items":          {"WithBloomItems", func(s *annotations.Spec) any { return s.BloomItems }},
	"bloom_fp":             {"WithBloomFP", func(s *annotations.Spec) any { return s.BloomFP }},
}

// modeConsts names the runtime's constant for each degrade= and
// invalidate= value, so the defaults read
// runtime.WithDegrade(runtime.DegradeLoader).
var modeConsts = map[string]string{
	runtime.DegradeOff:         "DegradeOff",
	runtime.DegradeLoader:      "DegradeLoader",
	runtime.InvalidateTracking: "InvalidateTracking",
	runtime.InvalidatePubSub:   "InvalidatePubSub",
}

// runtimeConst is a constant of the runtime package, written by its name.
type runtimeConst string

// modeConst is the argument of WithDegrade or WithInvalidate for mode: the
// runtime's constant, or the string itself for a mode this table does not
// know (annotations rejects those, so it is only a fallback that still
// compiles). "off" is the same string in both, and written as such.
func modeConst(mode string) any {
	if name, ok := modeConsts[mode]; ok {
		return runtimeConst(name)
	}
	return mode
}

// codeOptions shape the generated code rather than configure the cache.
var codeOptions = map[string]bool{"key": true, "name": true, "codec": true, "layout": true, "field": true, "expires": true}

// option is one runtime.Option call among a repository's defaults.
type option struct {
	Func string // "WithTTL"
	// Value is the argument: a time.Duration, float64, int, bool, string
	// or runtimeConst.
	Value any
}

// options lists the runtime options of spec's explicit arguments, in source
// order, after WithEntity. Durations, rates and counts come from the Spec,
// where annotations parsed them.
func options(entity string, spec *annotations.Spec) ([]option, ErrorList) {
	opts := []option{{Func: "WithEntity", Value: entity}}
	var errs ErrorList
	for _, a := range spec.Args {
		if codeOptions[a.Name] {
			continue
		}
		ro, ok := runtimeOptions[a.Name]
		if !ok {
			errs.Add(a.Pos, fmt.Sprintf("%s: this version of hotkeygen does not know which runtime option to emit for it; update the generator's option table", a.Name))
			continue
		}
		opts = append(opts, option{Func: ro.Func, Value: ro.Value(spec)})
	}
	return opts, errs
}

// durationUnits are the units durations are written in, largest first.
var durationUnits = []struct {
	d    time.Duration
	name string
}{
	{time.Hour, "Hour"},
	{time.Minute, "Minute"},
	{time.Second, "Second"},
	{time.Millisecond, "Millisecond"},
	{time.Microsecond, "Microsecond"},
	{time.Nanosecond, "Nanosecond"},
}

// durationParts splits d into n * unit with the largest unit that divides
// it exactly, so 90m reads "90 * time.Minute" and 1.5s "1500 *
// time.Millisecond". Zero has no unit.
func durationParts(d time.Duration) (n int64, unit string) {
	if d == 0 {
		return 0, ""
	}
	for _, u := range durationUnits {
		if d%u.d == 0 {
			return int64(d / u.d), u.name
		}
	}
	panic("unreachable: every duration is a whole number of nanoseconds")
}
