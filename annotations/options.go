package annotations

import (
	"errors"
	"fmt"
	"go/token"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	declared "github.com/hotkeygen/hotkeygen/internal/option"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// option parses the value of one name=value argument into a Spec.
type option struct {
	// form shows what a value looks like, completing "use a form like ...".
	form string
	// set stores v, already unquoted and non-empty, into s. at maps a byte
	// offset of v to its source position, for errors inside the value.
	// A returned *Error keeps its position and rule, or takes the
	// argument's position when it has none; any other error is an
	// unparsable value at the argument. The reader prefixes the option
	// name to the message.
	set func(s *Spec, v string, at func(int) token.Position) error
}

// options is the registry of //hotkey:cache options: those shaping the
// generated code, each documented by its row, and every option of the
// runtime's declaration (runtime/internal/config/options.go) a directive may set, parsed
// as its kind says. Adding an option to the runtime adds it here.
var options = withRuntimeOptions(map[string]option{
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
		r, width := utf8.DecodeRuneInString(v)
		if exported := string(unicode.ToUpper(r)) + v[width:]; !token.IsExported(exported) || !token.IsIdentifier(exported) {
			return fmt.Errorf("%q cannot name generated methods; use a Go identifier starting with a letter, like Account", v)
		}
		s.Name = v
		return nil
	}},
	// version=N (default 1) is the version of the entity's values in
	// Redis: their wire shape (docs/changing-structs.md). A version of 2
	// or more moves every key of the entity out of the previous versions'
	// way, so two builds of a service run side by side, each reading only
	// what its own version wrote.
	"version": {"2", func(s *Spec, v string, _ func(int) token.Position) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxVersion {
			return fmt.Errorf("%q is not a version; use a whole number from 1 to %d, as in version=2", v, MaxVersion)
		}
		s.Version = n
		return nil
	}},
	// codec=generated|reflect says how values are encoded for Redis:
	// msgpack methods the generator writes for the struct, or msgpack's
	// reflection. Both write the same format, so either reads the other.
	"codec": choice(func(s *Spec, v string) { s.Codec = v }, CodecGenerated, CodecReflect),
	// layout=string|hash says how values sit in Redis: one String per
	// key, or one hash per key holding a collection of items, each under
	// the field its field= gives (see layout.go).
	"layout": choice(func(s *Spec, v string) { s.Layout = v }, runtime.LayoutString, runtime.LayoutHash),
	// field={Field} names the struct field that tells the items of one
	// collection apart: their hash field (layout=hash).
	"field": {"{Token}", func(s *Spec, v string, at func(int) token.Position) error {
		s.Field, s.FieldPos = fieldRef(v, at)
		return nil
	}},
	// expires=Field names the time.Time field that holds each item's own
	// expiry (layout=hash): reads never return an item past it.
	"expires": {"ExpiresAt", func(s *Spec, v string, at func(int) token.Position) error {
		s.Expires, s.ExpiresPos = fieldRef(v, at)
		return nil
	}},
})

// withRuntimeOptions adds to code the runtime's options a directive may
// set. Each is set through its runtime.Option, the row's With.
func withRuntimeOptions(code map[string]option) map[string]option {
	for _, r := range declared.Rows() {
		if !r.Directive {
			continue
		}
		var opt option
		switch r.Kind {
		case declared.Duration:
			opt = duration(with(r.With.(func(time.Duration) runtime.Option)))
		case declared.Rate:
			opt = rate(with(r.With.(func(float64) runtime.Option)))
		case declared.Fraction:
			opt = fraction(with(r.With.(func(float64) runtime.Option)))
		case declared.Count:
			opt = count(with(r.With.(func(int) runtime.Option)))
		case declared.Size:
			opt = size(with(r.With.(func(int) runtime.Option)))
		case declared.Toggle:
			opt = toggle(with(r.With.(func(bool) runtime.Option)))
		case declared.Choice:
			opt = choice(with(r.With.(func(string) runtime.Option)), r.Words()...)
		default:
			panic(fmt.Sprintf("annotations: option %s is of kind %d, which has no syntax", r.Name, r.Kind))
		}
		code[r.Name] = opt
	}
	return code
}

// with sets an option through the runtime's own Option, which records that
// the option was written: a default that depends on it then follows it, as
// it does for a caller's options (see runtime.Config.Validate).
func with[T any](opt func(T) runtime.Option) func(*Spec, T) {
	return func(s *Spec, v T) { opt(v)(&s.Config) }
}

// duration is an option written in time.ParseDuration syntax; a bare 0 is
// accepted too.
func duration(set func(*Spec, time.Duration)) option {
	const form = "30s, 5m or 1h"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration; use a form like %s", v, form)
		}
		set(s, d)
		return nil
	}}
}

// rate is an option written as a decimal number of reads per second.
func rate(set func(*Spec, float64)) option {
	const form = "3000 or 2.5"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q is not a number; use a form like %s", v, form)
		}
		set(s, f)
		return nil
	}}
}

// count is an option written as a whole decimal number.
func count(set func(*Spec, int)) option {
	const form = "10 or 200"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		n, err := strconv.Atoi(v)
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is out of range; use a form like %s", v, form)
		}
		if err != nil {
			return fmt.Errorf("%q is not a whole number; use a form like %s", v, form)
		}
		set(s, n)
		return nil
	}}
}

// fraction is an option written as a plain decimal fraction, 0.05, or as a
// percentage, 5%. Exponents, hexadecimal and NaN are refused: a fraction
// should read the same to everyone.
func fraction(set func(*Spec, float64)) option {
	const form = "0.05 or 5%"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		num, percent := strings.CutSuffix(v, "%")
		if !isDecimal(num) {
			return fmt.Errorf("%q is not a fraction; use a form like %s", v, form)
		}
		if percent {
			// Shifting the decimal point before parsing rounds once, so
			// 0.7% is the float64 of 0.007, which 0.7/100 is not.
			num += "e-2"
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return fmt.Errorf("%s is out of range; use a form like %s", v, form)
		}
		if f == 0 {
			f = 0 // -0 would print as -0 in generated code
		}
		set(s, f)
		return nil
	}}
}

// isDecimal reports whether s is an optional sign, then digits with at most
// one decimal point among them.
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	digits, points := 0, 0
	for _, c := range []byte(s) {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// toggle is an option written on or off; true and false are accepted too,
// as Go code and most config files spell a switch.
func toggle(set func(*Spec, bool)) option {
	words := []string{"on", "off", "true", "false"}
	return option{"on or off", func(s *Spec, v string, _ func(int) token.Position) error {
		if !slices.Contains(words, v) {
			return notOneOf(v, words)
		}
		set(s, v == "on" || v == "true")
		return nil
	}}
}

// choice is an option written as one of a fixed set of words.
func choice(set func(*Spec, string), words ...string) option {
	return option{orList(words), func(s *Spec, v string, _ func(int) token.Position) error {
		if !slices.Contains(words, v) {
			return notOneOf(v, words)
		}
		set(s, v)
		return nil
	}}
}

// notOneOf reports v, which is none of words, with the closest word when
// one is close enough to help.
func notOneOf(v string, words []string) error {
	if guess := Closest(v, words); guess != "" {
		return fmt.Errorf("%q is not %s; did you mean %q?", v, orList(words), guess)
	}
	return fmt.Errorf("%q is not %s; use one of those", v, orList(words))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// sizeUnits are the units a size may carry. They are all powers of 1024
// with IEC names, so a size never leaves a reader wondering whether a
// kilobyte is 1000 or 1024 bytes.
var sizeUnits = map[string]int{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}

// size is an option written as a whole number of bytes, bare or followed
// by a unit of sizeUnits.
func size(set func(*Spec, int)) option {
	const form = "16384, 16KiB or 1MiB"
	return option{form, func(s *Spec, v string, _ func(int) token.Position) error {
		num := strings.TrimRightFunc(v, unicode.IsLetter)
		unit := v[len(num):]
		n, err := strconv.Atoi(num)
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is out of range; use a form like %s", v, form)
		}
		if err != nil {
			return fmt.Errorf("%q is not a size; use a form like %s", v, form)
		}
		scale := 1
		if unit != "" {
			var ok bool
			if scale, ok = sizeUnits[unit]; !ok {
				return fmt.Errorf("%q has unknown unit %q; use B, KiB or MiB (1024-based), as in 16KiB", v, unit)
			}
		}
		if n > math.MaxInt/scale || n < math.MinInt/scale {
			return fmt.Errorf("%s is out of range; use a form like %s", v, form)
		}
		set(s, n*scale)
		return nil
	}}
}
