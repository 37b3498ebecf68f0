package annotations

import (
	"errors"
	"go/token"

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
	// Version is the version of the entity's values (version=, 1 when not
	// set): the generator moves the keys of a version of 2 or more out of
	// the other versions' way, and refuses a change of the values' wire
	// shape that keeps the version.
	Version int
	// Codec is how values are encoded for Redis: CodecGenerated has the
	// generator write msgpack methods for the struct, CodecReflect leaves
	// it to msgpack's reflection. It shapes code, not the cache, so it is
	// no field of runtime.Config.
	Codec string
	// Layout is runtime.LayoutString or runtime.LayoutHash; with a hash,
	// Field names the struct field keying the items, and Expires the
	// time.Time field of their own expiry (empty for none). FieldPos and
	// ExpiresPos point at the names, for the generator's checks of the
	// struct. Like Codec they shape code (see layout.go).
	Layout               string
	Field, Expires       string
	FieldPos, ExpiresPos token.Position

	// Config holds every option's effective value: the runtime's defaults,
	// overridden by what the directives set. Its fields are the options
	// (Spec.TTL, Spec.HotQPS, ...), documented on runtime.Config, so the
	// two can never drift apart. Entity, Logger and Clock stay unset: they
	// are for the generator and the program.
	runtime.Config

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
	return Spec{Version: 1, Codec: CodecGenerated, Layout: runtime.LayoutString, Config: runtime.DefaultConfig()}
}

// MaxVersion bounds version=: a version is counted up one change at a
// time, and its digits become part of every key.
const MaxVersion = 9999

// The values of codec=.
const (
	CodecGenerated = "generated"
	CodecReflect   = "reflect"
)

// validate checks the combination of options with the runtime's own rules
// and reports every violation at the argument of the option the runtime
// blames, or at the directive when that option kept its default. Options
// in failed, whose argument could not be read, are not blamed again: they
// hold their defaults, which follow the options that were written.
func (s *Spec) validate(errs *ErrorList, failed map[string]bool) {
	s.validateLayout(errs, failed)
	cfg := s.Config
	err := cfg.Validate()
	if err == nil {
		return
	}
	all := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		all = joined.Unwrap()
	}
	for _, err := range all {
		var ce *runtime.ConfigError
		switch {
		case !errors.As(err, &ce):
			errs.add(s.Pos, RuleConfigInvalid, "%v", err)
		case failed[ce.Option]:
		default:
			if a, ok := s.Arg(ce.Option); ok {
				errs.add(a.Pos, RuleConfigInvalid, "%s: %s", ce.Option, ce.Msg)
			} else {
				errs.add(s.Pos, RuleConfigInvalid, "%s, left at its default: %s", ce.Option, ce.Msg)
			}
		}
	}
}
