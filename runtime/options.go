package runtime

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/option"
	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
)

// The options, each declared once: its name in directives and errors, the
// Config field it sets, its default and the rules its value alone must
// keep. DefaultConfig, the With functions, Validate's record of what was
// written, the annotations' table, the generator's option calls and (by a
// test) the README's option table all follow from these rows; the rules
// relating two options are in Validate. Adding an option takes a row, its
// Config field and its With function ("With"+field, returning the row's
// with), and a Default constant when users need to see the value; a test
// (options_test.go) checks that each With function and row agree. Why a
// row and not a struct tag: a row can hold the default and the rules as
// Go values the compiler checks, and annotations and the generator, which
// cannot see this package's unexported names, read a copy (internal/option).
var (
	optTTL               = duration("ttl", "TTL", 0, disables, expiry)
	optHotQPS            = rate("hot_qps", "HotQPS", DefaultHotQPS)
	optWarmQPS           = rate("warm_qps", "WarmQPS", DefaultWarmQPS)
	optTopN              = count("top_n", "TopN", DefaultTopN)
	optWindow            = duration("window", "Window", DefaultWindow, positiveDuration, slotsOfAMillisecond)
	optPromoteEvery      = duration("promote_every", "PromoteEvery", DefaultPromoteEvery, positiveDuration)
	optDemoteEvery       = duration("demote_every", "DemoteEvery", DefaultDemoteEvery, positiveDuration)
	optLocalSize         = count("local_size", "LocalSize", DefaultLocalSize)
	optLocalTTL          = duration("local_ttl", "LocalTTL", DefaultLocalTTL, positiveDuration)
	optRefresh           = duration("refresh", "Refresh", DefaultRefresh, disables)
	optRefreshFailures   = count("refresh_failures", "RefreshFailures", DefaultRefreshFailures, positive)
	optRecorderSize      = count("recorder_size", "RecorderSize", DefaultRecorderSize, positive)
	optInactiveAfter     = duration("inactive_after", "InactiveAfter", DefaultInactiveAfter, positiveDuration)
	optMonitorEvery      = duration("monitor_every", "MonitorEvery", DefaultMonitorEvery, disables).programOnly()
	optNullTTL           = duration("null_ttl", "NullTTL", DefaultNullTTL, disables, expiry)
	optJitter            = fraction("jitter", "Jitter", DefaultJitter, belowOne)
	optRebuildLock       = toggle("rebuild_lock", "RebuildLock", false)
	optRebuildLockTTL    = duration("rebuild_lock_ttl", "RebuildLockTTL", DefaultRebuildLockTTL, aMillisecond).programOnly()
	optDegrade           = choice("degrade", "Degrade", DegradeOff, word(DegradeOff, "DegradeOff"), word(DegradeLoader, "DegradeLoader"))
	optDegradeLimit      = count("degrade_limit", "DegradeLimit", DefaultDegradeLimit, positive).programOnly()
	optStaleReads        = toggle("stale_reads", "StaleReads", true)
	optInvalidate        = choice("invalidate", "Invalidate", InvalidateTracking, word(InvalidateTracking, "InvalidateTracking"), word(InvalidatePubSub, "InvalidatePubSub"), word(InvalidateOff, "InvalidateOff"))
	optMaxValueBytes     = size("max_value_bytes", "MaxValueBytes", DefaultMaxValueBytes)
	optMaxValueBytesHard = size("max_value_bytes_hard", "MaxValueBytesHard", 0)
	optAggregate         = toggle("aggregate", "Aggregate", false)
	optClusterHotQPS     = rate("cluster_hot_qps", "ClusterHotQPS", 0)
	optAggregateTop      = count("aggregate_top", "AggregateTop", DefaultAggregateTop, positive).programOnly()
	optChanges           = toggle("changes", "Changes", false)
	optSyncEvery         = duration("sync_every", "SyncEvery", DefaultSyncEvery)
	optSyncBatch         = count("sync_batch", "SyncBatch", DefaultSyncBatch, positive)
	optSyncLease         = duration("sync_lease", "SyncLease", DefaultSyncLease)
	optSyncTTL           = duration("sync_ttl", "SyncTTL", DefaultSyncTTL)
	optBloom             = toggle("bloom", "Bloom", false)
	optBloomItems        = count("bloom_items", "BloomItems", DefaultBloomItems)
	optBloomFP           = fraction("bloom_fp", "BloomFP", DefaultBloomFP)
)

// settings lists the rows above in their order, which is the order of
// Validate's checks of single values. declare appends each as the
// package's variables are initialized, so no package-level variable may
// call DefaultConfig or Validate.
var settings []*setting

// setting is one row of the declaration.
type setting struct {
	option.Row
	// bit is the setting's bit in Config.written: its place in settings.
	bit uint
	// field is the index of Row.Field in Config, for reflect.
	field []int
	// rules check the value alone; each returns "" when it holds, or
	// what is wrong.
	rules []func(any) string
}

// opt is a setting whose values are of type T, so its With function is
// typed.
type opt[T any] struct{ *setting }

// with returns the Option setting o to v: the With function of o is a
// call of it.
func (o opt[T]) with(v T) Option {
	return func(c *Config) { o.set(c, v); c.wrote(o.setting) }
}

// programOnly marks an option a directive cannot set: it tunes the
// program rather than the entity.
func (o opt[T]) programOnly() opt[T] {
	o.Directive = false
	return o
}

// declare adds a row to settings. A field that Config lacks, or of another
// type than T, stops the program at its initialization, so every test
// finds it.
func declare[T any](kind option.Kind, name, field string, def T, rules ...func(T) string) opt[T] {
	f, ok := reflect.TypeFor[Config]().FieldByName(field)
	if !ok || f.Type != reflect.TypeFor[T]() || len(settings) == 64 {
		panic(fmt.Sprintf("runtime: option %s: Config has no field %s of type %v, or there are more than 64 options", name, field, reflect.TypeFor[T]()))
	}
	s := &setting{Row: option.Row{Name: name, Field: field, Kind: kind, Directive: true, Default: def}, bit: uint(len(settings)), field: f.Index}
	for _, rule := range rules {
		s.rules = append(s.rules, func(v any) string { return rule(v.(T)) })
	}
	o := opt[T]{s}
	s.With = o.with
	settings = append(settings, s)
	return o
}

func duration(name, field string, def time.Duration, rules ...func(time.Duration) string) opt[time.Duration] {
	return declare(option.Duration, name, field, def, rules...)
}

func rate(name, field string, def float64, rules ...func(float64) string) opt[float64] {
	return declare(option.Rate, name, field, def, rules...)
}

func fraction(name, field string, def float64, rules ...func(float64) string) opt[float64] {
	return declare(option.Fraction, name, field, def, rules...)
}

func count(name, field string, def int, rules ...func(int) string) opt[int] {
	return declare(option.Count, name, field, def, rules...)
}

func size(name, field string, def int, rules ...func(int) string) opt[int] {
	return declare(option.Size, name, field, def, rules...)
}

func toggle(name, field string, def bool) opt[bool] {
	return declare(option.Toggle, name, field, def)
}

// choice declares an option holding one of words, and the rule that it
// does.
func choice(name, field, def string, words ...option.Word) opt[string] {
	o := declare(option.Choice, name, field, def, func(v string) string {
		for _, w := range words {
			if v == w.Text {
				return ""
			}
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = strconv.Quote(w.Text)
		}
		last := len(quoted) - 1
		return fmt.Sprintf("must be %s or %s, got %q", strings.Join(quoted[:last], ", "), quoted[last], v)
	})
	o.Choices = words
	return o
}

// word is a value of a choice, and the name of the runtime's constant
// holding it, which generated code writes.
func word(text, constant string) option.Word { return option.Word{Text: text, Const: constant} }

// self lets a function take any opt[T] as its setting.
func (s *setting) self() *setting { return s }

// anySetting is an opt of any type.
type anySetting interface{ self() *setting }

func (s *setting) set(c *Config, v any) {
	reflect.ValueOf(c).Elem().FieldByIndex(s.field).Set(reflect.ValueOf(v))
}

func (s *setting) value(c *Config) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(s.field).Interface()
}

// errorf reports the setting's value as invalid.
func (s *setting) errorf(format string, args ...any) error {
	return &ConfigError{Option: s.Name, Msg: fmt.Sprintf(format, args...)}
}

// check returns the rules of s that c's value breaks.
func (s *setting) check(c *Config) []error {
	var errs []error
	v := s.value(c)
	for _, rule := range s.rules {
		if msg := rule(v); msg != "" {
			errs = append(errs, &ConfigError{Option: s.Name, Msg: msg})
		}
	}
	return errs
}

func init() {
	rows := make([]option.Row, len(settings))
	for i, s := range settings {
		rows[i] = s.Row
	}
	option.Publish(rows)
}

// The rules of single values.

func positiveDuration(d time.Duration) string {
	if d <= 0 {
		return fmt.Sprintf("must be a positive duration, got %v", d)
	}
	return ""
}

// disables is the rule of a duration that 0 turns off.
func disables(d time.Duration) string {
	if d < 0 {
		return fmt.Sprintf("must not be negative (0 disables it), got %v", d)
	}
	return ""
}

// expiry is the rule of a duration Redis keeps as an expiry.
func expiry(d time.Duration) string {
	if d > 0 && d < time.Millisecond {
		return fmt.Sprintf("Redis expiries have millisecond resolution, got %v", d)
	}
	return ""
}

func aMillisecond(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("must be at least 1ms, got %v", d)
	}
	return ""
}

// slotsOfAMillisecond is the window's rule: each of its slots lasts a
// millisecond at least.
func slotsOfAMillisecond(d time.Duration) string {
	if d > 0 && d < detect.Slots*time.Millisecond {
		return fmt.Sprintf("must be at least %v so each of its %d slots lasts a millisecond, got %v", detect.Slots*time.Millisecond, detect.Slots, d)
	}
	return ""
}

func positive(n int) string {
	if n <= 0 {
		return fmt.Sprintf("must be positive, got %d", n)
	}
	return ""
}

// belowOne is jitter's rule.
func belowOne(f float64) string {
	if f < 0 || f >= 1 || f != f {
		return fmt.Sprintf("must be a fraction from 0 up to but not including 1, got %v", f)
	}
	return ""
}
