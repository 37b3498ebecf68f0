package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
)

// setting names one field of Config, for the record of which ones an
// Option wrote.
type setting uint8

const (
	setTTL setting = iota
	setHotQPS
	setWarmQPS
	setTopN
	setWindow
	setPromoteEvery
	setDemoteEvery
	setLocalSize
	setLocalTTL
	setRefresh
	setRefreshFailures
	setRecorderSize
	setInactiveAfter
	setMonitorEvery
	setNullTTL
	setJitter
	setRebuildLock
	setRebuildLockTTL
	setDegrade
	setDegradeLimit
	setStaleReads
	setMaxValueBytes
	setMaxValueBytesHard
	setInvalidate
	setAggregate
	setClusterHotQPS
	setAggregateTop
	setChanges
	setSyncEvery
	setSyncBatch
	setSyncLease
	setSyncTTL
	setBloom
	setBloomItems
	setBloomFP
)

// settings is a set of settings.
type settings uint64

func (c *Config) wrote(s setting)          { c.written |= 1 << s }
func (c *Config) isWritten(s setting) bool { return c.written&(1<<s) != 0 }

// ConfigError reports one invalid setting. Option is the annotation option
// name ("warm_qps"), so the generator can point at the offending argument.
type ConfigError struct {
	Option string
	Msg    string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("hotkey: invalid %s: %s", e.Option, e.Msg)
}

// resolved returns c with the defaults that depend on another setting
// following the value written for it. A default must never be the reason a
// value the caller chose is refused: hot_qps=100 alone lowers warm_qps with
// it, local_size=5 alone lowers top_n, a short local_ttl shortens refresh.
// Only two written values can contradict each other.
func (c Config) resolved() Config {
	w := c.isWritten
	switch {
	case !w(setWarmQPS):
		c.WarmQPS = c.HotQPS / WarmRatio
	case !w(setHotQPS) && c.WarmQPS > c.HotQPS:
		c.HotQPS = c.WarmQPS * WarmRatio
	}
	switch {
	case !w(setTopN) && c.TopN > c.LocalSize && c.LocalSize > 0:
		c.TopN = c.LocalSize
	case !w(setLocalSize) && c.LocalSize < c.TopN:
		c.LocalSize = c.TopN
	}
	switch {
	case !w(setRefresh) && c.Refresh >= c.LocalTTL && c.LocalTTL > 0:
		c.Refresh = c.LocalTTL / 2
	case !w(setLocalTTL) && c.Refresh != 0 && c.LocalTTL <= c.Refresh:
		c.LocalTTL = 2 * c.Refresh
	}
	if !w(setMaxValueBytes) && c.MaxValueBytesHard > 0 && c.MaxValueBytes > c.MaxValueBytesHard {
		c.MaxValueBytes = c.MaxValueBytesHard
	}
	return c
}

// Validate reports every setting the runtime cannot work with, each as a
// *ConfigError, joined (errors.As finds the first), after the defaults
// that depend on other settings followed them (see resolved). The
// generator calls it on annotation values, so the rules live here once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(opt, format string, args ...any) {
		errs = append(errs, &ConfigError{Option: opt, Msg: fmt.Sprintf(format, args...)})
	}
	r := c.resolved()
	type duration struct {
		opt string
		d   time.Duration
	}
	for _, p := range []duration{
		{"window", r.Window},
		{"promote_every", r.PromoteEvery},
		{"demote_every", r.DemoteEvery},
		{"local_ttl", r.LocalTTL},
		{"inactive_after", r.InactiveAfter},
	} {
		if p.d <= 0 {
			bad(p.opt, "must be a positive duration, got %v", p.d)
		}
	}
	if r.Window > 0 && r.Window < detect.Slots*time.Millisecond {
		bad("window", "must be at least %v so each of its %d slots lasts a millisecond, got %v", detect.Slots*time.Millisecond, detect.Slots, r.Window)
	}
	for _, p := range []duration{
		{"ttl", r.TTL},
		{"refresh", r.Refresh},
		{"monitor_every", r.MonitorEvery},
		{"null_ttl", r.NullTTL},
	} {
		if p.d < 0 {
			bad(p.opt, "must not be negative (0 disables it), got %v", p.d)
		}
	}
	for _, p := range []duration{{"ttl", r.TTL}, {"null_ttl", r.NullTTL}} {
		if p.d > 0 && p.d < time.Millisecond {
			bad(p.opt, "Redis expiries have millisecond resolution, got %v", p.d)
		}
	}
	if r.RebuildLockTTL < time.Millisecond {
		bad("rebuild_lock_ttl", "must be at least 1ms, got %v", r.RebuildLockTTL)
	}
	if r.Degrade != DegradeOff && r.Degrade != DegradeLoader {
		bad("degrade", "must be %q or %q, got %q", DegradeOff, DegradeLoader, r.Degrade)
	}
	if r.DegradeLimit <= 0 {
		bad("degrade_limit", "must be positive, got %d", r.DegradeLimit)
	}
	if r.Invalidate != InvalidateTracking && r.Invalidate != InvalidatePubSub && r.Invalidate != InvalidateOff {
		bad("invalidate", "must be %q, %q or %q, got %q", InvalidateTracking, InvalidatePubSub, InvalidateOff, r.Invalidate)
	}
	switch {
	case r.MaxValueBytes < 0:
		bad("max_value_bytes", "must not be negative (0 disables the warning), got %d", r.MaxValueBytes)
	case r.MaxValueBytesHard < 0:
		bad("max_value_bytes_hard", "must not be negative (0 disables the limit), got %d", r.MaxValueBytesHard)
	case r.MaxValueBytesHard > 0 && r.MaxValueBytesHard < r.MaxValueBytes:
		bad("max_value_bytes_hard", "%d is below max_value_bytes %d: writes would be refused before they were ever warned about; raise it, or lower max_value_bytes", r.MaxValueBytesHard, r.MaxValueBytes)
	}
	switch {
	case !(r.ClusterHotQPS >= 0): // NaN too
		bad("cluster_hot_qps", "must not be negative (0 means hot_qps), got %v", r.ClusterHotQPS)
	case r.ClusterHotQPS > 0 && !r.Aggregate:
		bad("cluster_hot_qps", "applies only to cluster-wide detection, which is off; add aggregate=on (WithAggregate(true)), or remove cluster_hot_qps")
	}
	if r.AggregateTop <= 0 {
		bad("aggregate_top", "must be positive, got %d", r.AggregateTop)
	}
	if r.Jitter < 0 || r.Jitter >= 1 || r.Jitter != r.Jitter {
		bad("jitter", "must be a fraction from 0 up to but not including 1, got %v", r.Jitter)
	}
	switch {
	case !(r.HotQPS > 0):
		bad("hot_qps", "must be positive, got %v", r.HotQPS)
	case !(r.WarmQPS > 0):
		bad("warm_qps", "must be positive, got %v", r.WarmQPS)
	case r.WarmQPS > r.HotQPS:
		bad("warm_qps", "%v is above hot_qps %v; a key must cool below the promotion rate to be demoted: lower warm_qps, or leave it out to follow hot_qps / %d", r.WarmQPS, r.HotQPS, WarmRatio)
	}
	switch {
	case r.TopN <= 0:
		bad("top_n", "must be positive, got %d", r.TopN)
	case r.LocalSize <= 0:
		bad("local_size", "must be positive, got %d", r.LocalSize)
	case r.TopN > r.LocalSize:
		bad("top_n", "%d exceeds local_size %d; every hot key needs a local slot: raise local_size, or lower top_n", r.TopN, r.LocalSize)
	}
	if r.RefreshFailures <= 0 {
		bad("refresh_failures", "must be positive, got %d", r.RefreshFailures)
	}
	if r.RecorderSize <= 0 {
		bad("recorder_size", "must be positive, got %d", r.RecorderSize)
	}
	errs = append(errs, r.validateChanges()...)
	errs = append(errs, r.validateBloom()...)
	if r.Refresh > 0 && r.LocalTTL > 0 && r.Refresh >= r.LocalTTL {
		bad("refresh", "%v must be shorter than local_ttl %v, or local copies expire before they are refreshed", r.Refresh, r.LocalTTL)
	}
	return errors.Join(errs...)
}
