package config

import (
	"errors"
	"fmt"

	"github.com/hotkeygen/hotkeygen/internal/option"
)

// Error reports one invalid setting. Option is the annotation option
// name ("warm_qps"), so the generator can point at the offending argument.
type Error struct {
	Option string
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("hotkey: invalid %s: %s", e.Option, e.Msg)
}

// Resolved returns c with the defaults that depend on another setting
// following the value written for it. A default must never be the reason a
// value the caller chose is refused: hot_qps=100 alone lowers warm_qps with
// it, local_size=5 alone lowers top_n, a short local_ttl shortens refresh.
// Only two written values can contradict each other.
func (c Config) Resolved() Config {
	w := func(s option.Any[Config]) bool { return s.Self().Written(&c) }
	switch {
	case !w(WarmQPS):
		c.WarmQPS = c.HotQPS / WarmRatio
	case !w(HotQPS) && c.WarmQPS > c.HotQPS:
		c.HotQPS = c.WarmQPS * WarmRatio
	}
	switch {
	case !w(TopN) && c.TopN > c.LocalSize && c.LocalSize > 0:
		c.TopN = c.LocalSize
	case !w(LocalSize) && c.LocalSize < c.TopN:
		c.LocalSize = c.TopN
	}
	switch {
	case !w(Refresh) && c.Refresh >= c.LocalTTL && c.LocalTTL > 0:
		c.Refresh = c.LocalTTL / 2
	case !w(LocalTTL) && c.Refresh != 0 && c.LocalTTL <= c.Refresh:
		c.LocalTTL = 2 * c.Refresh
	}
	if !w(MaxValueBytes) && c.MaxValueBytesHard > 0 && c.MaxValueBytes > c.MaxValueBytesHard {
		c.MaxValueBytes = c.MaxValueBytesHard
	}
	return c
}

// Validate reports every setting the runtime cannot work with, each as a
// *Error, joined (errors.As finds the first), after the defaults
// that depend on other settings followed them (see Resolved). The
// generator calls it on annotation values, so the rules live here once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(s option.Any[Config], format string, args ...any) {
		errs = append(errs, s.Self().Errorf(format, args...))
	}
	r := c.Resolved()
	// What options were given that they cannot take, the rules of single
	// values, declared with the options (options.go) and judged on what
	// was written, then those relating two options, judged only between
	// values that keep their own rules: a broken value is reported once,
	// by its row.
	errs = append(errs, r.Given.Misused...)
	errs = append(errs, Options.Check(c)...)
	if r.MaxValueBytesHard > 0 && r.MaxValueBytes > 0 && r.MaxValueBytesHard < r.MaxValueBytes {
		bad(MaxValueBytesHard, "%d is below max_value_bytes %d: writes would be refused before they were ever warned about; raise it, or lower max_value_bytes", r.MaxValueBytesHard, r.MaxValueBytes)
	}
	if r.ClusterHotQPS > 0 && !r.Aggregate {
		bad(ClusterHotQPS, "applies only to cluster-wide detection, which is off; add aggregate=on (WithAggregate(true)), or remove cluster_hot_qps")
	}
	if r.HotQPS > 0 && r.WarmQPS > r.HotQPS {
		bad(WarmQPS, "%v is above hot_qps %v; a key must cool below the promotion rate to be demoted: lower warm_qps, or leave it out to follow hot_qps / %d", r.WarmQPS, r.HotQPS, WarmRatio)
	}
	if r.LocalSize > 0 && r.TopN > r.LocalSize {
		bad(TopN, "%d exceeds local_size %d; every hot key needs a local slot: raise local_size, or lower top_n", r.TopN, r.LocalSize)
	}
	errs = append(errs, r.validateChanges()...)
	errs = append(errs, r.validateBloom()...)
	if r.Refresh > 0 && r.LocalTTL > 0 && r.Refresh >= r.LocalTTL {
		bad(Refresh, "%v must be shorter than local_ttl %v, or local copies expire before they are refreshed", r.Refresh, r.LocalTTL)
	}
	return errors.Join(errs...)
}

// Apply returns the Config of a Cache, resolved: the defaults, then the
// options annotated on the entity (annotated), then the caller's (opts),
// which have the last word, so an error about an option names the
// caller's own by its place among opts; every setting the runtime cannot
// work with is reported, as Validate does. A nil clock is the wall clock.
func Apply(annotated, opts []Option) (Config, error) {
	cfg := Default()
	for _, o := range annotated {
		if o == nil {
			return Config{}, errors.New("hotkey: one of Glue.Defaults is nil; pass Options from With functions")
		}
		o(&cfg)
	}
	for i, o := range opts {
		if o == nil {
			return Config{}, fmt.Errorf("hotkey: option %d of %d is nil; pass an Option from a With function", i+1, len(opts))
		}
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	cfg = cfg.Resolved()
	if cfg.Clock == nil {
		cfg.Clock = Wall{}
	}
	return cfg, nil
}
