package annotations

import (
	"errors"
	"fmt"
	"go/token"
	"math"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// option parses the value of one name=value argument into a Spec.
type option struct {
	// form shows what a value looks like, completing "use a form like ...".
	form string
	// set stores v, already unquoted and non-empty, into s. at maps a byte
	// offset of v to its source position, for errors inside the value.
	// A returned *Error keeps its position; any other error is reported at
	// the argument. The reader prefixes the option name to the message.
	set func(s *Spec, v string, at func(int) token.Position) error
}

// options is the registry of //hotkey:cache options; each row documents its
// option. Adding an option takes a Spec field, its default in newSpec, a
// row here and, when the runtime knows it, a line in Spec.Config.
var options = map[string]option{
	// key=TEMPLATE (required) is the Redis key: literal text and {Field}
	// references to fields of the struct, as in key=user:{ID}.
	"key": {"user:{ID}", func(s *Spec, v string, at func(int) token.Position) error {
		t, err := parseTemplate(v, at)
		s.Key = t
		return err
	}},
	// name=IDENT replaces the type's name in generated method names, as in
	// name=Account; it must start with a letter that has an upper case.
	"name": {"Account", func(s *Spec, v string, _ func(int) token.Position) error {
		r, size := utf8.DecodeRuneInString(v)
		if exported := string(unicode.ToUpper(r)) + v[size:]; !token.IsExported(exported) || !token.IsIdentifier(exported) {
			return fmt.Errorf("%q cannot name generated methods; use a Go identifier starting with a letter, like Account", v)
		}
		s.Name = v
		return nil
	}},

	// ttl=DURATION is the Redis expiry of writes; 0 writes without expiry.
	"ttl": duration(func(s *Spec) *time.Duration { return &s.TTL }),

	// hot_qps=RATE is the per-instance reads per second promoting a key.
	"hot_qps": rate(func(s *Spec) *float64 { return &s.HotQPS }),
	// warm_qps=RATE is the rate below which a hot key is demoted.
	"warm_qps": rate(func(s *Spec) *float64 { return &s.WarmQPS }),
	// top_n=COUNT caps how many keys of the entity are hot at once.
	"top_n": count(func(s *Spec) *int { return &s.TopN }),

	// window=DURATION is the span over which read rates are measured.
	"window": duration(func(s *Spec) *time.Duration { return &s.Window }),
	// promote_every=DURATION paces promotion of keys that became hot.
	"promote_every": duration(func(s *Spec) *time.Duration { return &s.PromoteEvery }),
	// demote_every=DURATION paces demotion of keys that cooled down.
	"demote_every": duration(func(s *Spec) *time.Duration { return &s.DemoteEvery }),

	// local_size=COUNT bounds the in-process store of hot values.
	"local_size": count(func(s *Spec) *int { return &s.LocalSize }),
	// local_ttl=DURATION expires a local value after it was written.
	"local_ttl": duration(func(s *Spec) *time.Duration { return &s.LocalTTL }),

	// refresh=DURATION reloads hot keys from Redis at this interval; 0
	// disables reloading.
	"refresh": duration(func(s *Spec) *time.Duration { return &s.Refresh }),
	// refresh_failures=COUNT drops a local copy after this many reloads
	// failed in a row.
	"refresh_failures": count(func(s *Spec) *int { return &s.RefreshFailures }),

	// recorder_size=COUNT bounds how many distinct keys detection tracks.
	"recorder_size": count(func(s *Spec) *int { return &s.RecorderSize }),
	// inactive_after=DURATION makes detection forget keys idle that long.
	"inactive_after": duration(func(s *Spec) *time.Duration { return &s.InactiveAfter }),
}

// duration is an option written in time.ParseDuration syntax; a bare 0 is
// accepted too.
func duration(field func(*Spec) *time.Duration) option {
	const form = "30s, 5m or 1h"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration; use a form like %s", v, form)
		}
		*field(s) = d
		return nil
	}}
}

// rate is an option written as a decimal number of reads per second.
func rate(field func(*Spec) *float64) option {
	const form = "3000 or 2.5"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q is not a number; use a form like %s", v, form)
		}
		*field(s) = f
		return nil
	}}
}

// count is an option written as a whole decimal number.
func count(field func(*Spec) *int) option {
	const form = "10 or 200"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		n, err := strconv.Atoi(v)
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is out of range; use a form like %s", v, form)
		}
		if err != nil {
			return fmt.Errorf("%q is not a whole number; use a form like %s", v, form)
		}
		*field(s) = n
		return nil
	}}
}
