package runtime

import (
	"errors"
	"fmt"

	"github.com/hotkeygen/hotkeygen/internal/option"
)

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
	w := func(s option.Any[Config]) bool { return s.Self().Written(&c) }
	switch {
	case !w(optWarmQPS):
		c.WarmQPS = c.HotQPS / WarmRatio
	case !w(optHotQPS) && c.WarmQPS > c.HotQPS:
		c.HotQPS = c.WarmQPS * WarmRatio
	}
	switch {
	case !w(optTopN) && c.TopN > c.LocalSize && c.LocalSize > 0:
		c.TopN = c.LocalSize
	case !w(optLocalSize) && c.LocalSize < c.TopN:
		c.LocalSize = c.TopN
	}
	switch {
	case !w(optRefresh) && c.Refresh >= c.LocalTTL && c.LocalTTL > 0:
		c.Refresh = c.LocalTTL / 2
	case !w(optLocalTTL) && c.Refresh != 0 && c.LocalTTL <= c.Refresh:
		c.LocalTTL = 2 * c.Refresh
	}
	if !w(optMaxValueBytes) && c.MaxValueBytesHard > 0 && c.MaxValueBytes > c.MaxValueBytesHard {
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
	bad := func(s option.Any[Config], format string, args ...any) {
		errs = append(errs, s.Self().Errorf(format, args...))
	}
	r := c.resolved()
	// What options were given that they cannot take, the rules of single
	// values, declared with the options (options.go) and judged on what
	// was written, then those relating two options, judged only between
	// values that keep their own rules: a broken value is reported once,
	// by its row.
	errs = append(errs, r.misused...)
	errs = append(errs, options.Check(c)...)
	if r.MaxValueBytesHard > 0 && r.MaxValueBytes > 0 && r.MaxValueBytesHard < r.MaxValueBytes {
		bad(optMaxValueBytesHard, "%d is below max_value_bytes %d: writes would be refused before they were ever warned about; raise it, or lower max_value_bytes", r.MaxValueBytesHard, r.MaxValueBytes)
	}
	if r.ClusterHotQPS > 0 && !r.Aggregate {
		bad(optClusterHotQPS, "applies only to cluster-wide detection, which is off; add aggregate=on (WithAggregate(true)), or remove cluster_hot_qps")
	}
	if r.HotQPS > 0 && r.WarmQPS > r.HotQPS {
		bad(optWarmQPS, "%v is above hot_qps %v; a key must cool below the promotion rate to be demoted: lower warm_qps, or leave it out to follow hot_qps / %d", r.WarmQPS, r.HotQPS, WarmRatio)
	}
	if r.LocalSize > 0 && r.TopN > r.LocalSize {
		bad(optTopN, "%d exceeds local_size %d; every hot key needs a local slot: raise local_size, or lower top_n", r.TopN, r.LocalSize)
	}
	errs = append(errs, r.validateChanges()...)
	errs = append(errs, r.validateBloom()...)
	if r.Refresh > 0 && r.LocalTTL > 0 && r.Refresh >= r.LocalTTL {
		bad(optRefresh, "%v must be shorter than local_ttl %v, or local copies expire before they are refreshed", r.Refresh, r.LocalTTL)
	}
	return errors.Join(errs...)
}
