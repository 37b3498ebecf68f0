package annotations

import (
	"errors"
	"go/token"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// Spec is what a struct's //hotkey:cache directives ask for: every option
// with its effective value, defaults filled in from runtime.DefaultConfig.
type Spec struct {
	// Pos is the first //hotkey:cache line, for problems of the whole
	// directive.
	Pos token.Position
	// Key is the Redis key template.
	Key Template
	// Name replaces the type's name in generated method names; empty when
	// the directive does not set it.
	Name string

	// The options, meaning what the runtime.Config field of the same name
	// documents.
	TTL               time.Duration
	HotQPS            float64
	WarmQPS           float64
	TopN              int
	Window            time.Duration
	PromoteEvery      time.Duration
	DemoteEvery       time.Duration
	LocalSize         int
	LocalTTL          time.Duration
	Refresh           time.Duration
	RefreshFailures   int
	RecorderSize      int
	InactiveAfter     time.Duration
	NullTTL           time.Duration
	Jitter            float64
	RebuildLock       bool
	Degrade           string
	Invalidate        string
	MaxValueBytes     int
	MaxValueBytesHard int
	Aggregate         bool
	ClusterHotQPS     float64

	// Args lists the options the directives set explicitly, in source
	// order, so the generator can emit exactly those, deterministically.
	Args []Arg
}

// Arg is one name=value argument as written in a directive.
type Arg struct {
	Name  string
	Value string // unquoted
	Pos   token.Position
}

// Arg returns the argument that set the named option, if one did.
func (s *Spec) Arg(name string) (Arg, bool) {
	for _, a := range s.Args {
		if a.Name == name {
			return a, true
		}
	}
	return Arg{}, false
}

// newSpec returns a Spec holding the runtime's defaults, so a directive
// that sets nothing behaves like a Cache built without options.
func newSpec() Spec {
	d := runtime.DefaultConfig()
	return Spec{
		TTL:               d.TTL,
		HotQPS:            d.HotQPS,
		WarmQPS:           d.WarmQPS,
		TopN:              d.TopN,
		Window:            d.Window,
		PromoteEvery:      d.PromoteEvery,
		DemoteEvery:       d.DemoteEvery,
		LocalSize:         d.LocalSize,
		LocalTTL:          d.LocalTTL,
		Refresh:           d.Refresh,
		RefreshFailures:   d.RefreshFailures,
		RecorderSize:      d.RecorderSize,
		InactiveAfter:     d.InactiveAfter,
		NullTTL:           d.NullTTL,
		Jitter:            d.Jitter,
		RebuildLock:       d.RebuildLock,
		Degrade:           d.Degrade,
		Invalidate:        d.Invalidate,
		MaxValueBytes:     d.MaxValueBytes,
		MaxValueBytesHard: d.MaxValueBytesHard,
		Aggregate:         d.Aggregate,
		ClusterHotQPS:     d.ClusterHotQPS,
	}
}

// Config returns the runtime configuration the directive describes. Entity
// is left for the generator, which knows the type.
func (s *Spec) Config() runtime.Config {
	c := runtime.DefaultConfig()
	c.TTL = s.TTL
	c.HotQPS = s.HotQPS
	c.WarmQPS = s.WarmQPS
	c.TopN = s.TopN
	c.Window = s.Window
	c.PromoteEvery = s.PromoteEvery
	c.DemoteEvery = s.DemoteEvery
	c.LocalSize = s.LocalSize
	c.LocalTTL = s.LocalTTL
	c.Refresh = s.Refresh
	c.RefreshFailures = s.RefreshFailures
	c.RecorderSize = s.RecorderSize
	c.InactiveAfter = s.InactiveAfter
	c.NullTTL = s.NullTTL
	c.Jitter = s.Jitter
	c.RebuildLock = s.RebuildLock
	c.Degrade = s.Degrade
	c.Invalidate = s.Invalidate
	c.MaxValueBytes = s.MaxValueBytes
	c.MaxValueBytesHard = s.MaxValueBytesHard
	c.Aggregate = s.Aggregate
	c.ClusterHotQPS = s.ClusterHotQPS
	return c
}

// validate checks the combination of options with the runtime's own rules
// and reports a violation at the argument of the option the runtime blames,
// or at the directive when that option kept its default.
func (s *Spec) validate(errs *ErrorList) {
	cfg := s.Config()
	err := cfg.Validate()
	if err == nil {
		return
	}
	var ce *runtime.ConfigError
	if !errors.As(err, &ce) {
		errs.add(s.Pos, "%v", err)
		return
	}
	if a, ok := s.Arg(ce.Option); ok {
		errs.add(a.Pos, "%s: %s", ce.Option, ce.Msg)
		return
	}
	errs.add(s.Pos, "%s, left at its default: %s", ce.Option, ce.Msg)
}
