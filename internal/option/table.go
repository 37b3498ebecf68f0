package option

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Table is the declaration of the options of a configuration of type C,
// which options of type O (a func(*C)) set: its rows in the order they
// were declared, which is the order of their checks. The runtime declares
// its options in one Table, a package-level variable per row, so that
// DefaultConfig, the With functions, Validate's checks of single values
// and the published Rows all follow from the rows. Why generic over C and
// O rather than written for runtime.Config: this package cannot import the
// runtime, which imports it, and a row's With must be a
// func(T) runtime.Option for the annotations to call it.
type Table[C any, O ~func(*C)] struct {
	settings []*Setting[C]
	// written returns the set of C recording the options written to it.
	written func(*C) *Written
	// invalid is the error of an option whose value breaks a rule.
	invalid func(option, msg string) error
}

// NewTable returns an empty table of C's options. written locates, in a
// C, the record of which options were written; invalid makes the error of
// an option (its Name) whose value breaks a rule (msg).
func NewTable[C any, O ~func(*C)](written func(*C) *Written, invalid func(option, msg string) error) *Table[C, O] {
	return &Table[C, O]{written: written, invalid: invalid}
}

// Declare adds a row to t. A field that C lacks, or of another type than
// T, stops the program at its initialization, so every test finds it; so
// do more options than Written holds.
func Declare[T, C any, O ~func(*C)](t *Table[C, O], kind Kind, name, field string, def T, rules ...func(T) string) Of[C, O, T] {
	f, ok := reflect.TypeFor[C]().FieldByName(field)
	if !ok || f.Type != reflect.TypeFor[T]() || len(t.settings) == maxOptions {
		panic(fmt.Sprintf("option %s: %v has no field %s of type %v, or there are more than %d options", name, reflect.TypeFor[C](), field, reflect.TypeFor[T](), maxOptions))
	}
	s := &Setting[C]{
		Row: Row{Name: name, Field: field, Kind: kind, Directive: true, Default: def},
		bit: uint(len(t.settings)), field: f.Index, written: t.written, invalid: t.invalid,
	}
	for _, rule := range rules {
		s.rules = append(s.rules, func(v any) string { return rule(v.(T)) })
	}
	o := Of[C, O, T]{s}
	s.With = o.With
	t.settings = append(t.settings, s)
	return o
}

// Duration declares an option holding a time.Duration.
func (t *Table[C, O]) Duration(name, field string, def time.Duration, rules ...func(time.Duration) string) Of[C, O, time.Duration] {
	return Declare(t, Duration, name, field, def, rules...)
}

// Rate declares an option holding reads per second.
func (t *Table[C, O]) Rate(name, field string, def float64, rules ...func(float64) string) Of[C, O, float64] {
	return Declare(t, Rate, name, field, def, rules...)
}

// Fraction declares an option holding a fraction.
func (t *Table[C, O]) Fraction(name, field string, def float64, rules ...func(float64) string) Of[C, O, float64] {
	return Declare(t, Fraction, name, field, def, rules...)
}

// Count declares an option holding a count.
func (t *Table[C, O]) Count(name, field string, def int, rules ...func(int) string) Of[C, O, int] {
	return Declare(t, Count, name, field, def, rules...)
}

// Size declares an option holding a number of bytes.
func (t *Table[C, O]) Size(name, field string, def int, rules ...func(int) string) Of[C, O, int] {
	return Declare(t, Size, name, field, def, rules...)
}

// Toggle declares an option that is on or off.
func (t *Table[C, O]) Toggle(name, field string, def bool) Of[C, O, bool] {
	return Declare(t, Toggle, name, field, def)
}

// Choice declares an option holding one of words, and the rule that it
// does.
func (t *Table[C, O]) Choice(name, field, def string, words ...Word) Of[C, O, string] {
	o := Declare(t, Choice, name, field, def, func(v string) string {
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

// Defaults sets every declared option of c to its default.
func (t *Table[C, O]) Defaults(c *C) {
	for _, s := range t.settings {
		s.Set(c, s.Default)
	}
}

// Check returns the rules of single values that c breaks, in the order of
// the rows.
func (t *Table[C, O]) Check(c *C) []error {
	var errs []error
	for _, s := range t.settings {
		errs = append(errs, s.Check(c)...)
	}
	return errs
}

// Settings returns the rows in their order.
func (t *Table[C, O]) Settings() []*Setting[C] { return t.settings }

// Rows returns the rows as the other packages read them (see Publish).
func (t *Table[C, O]) Rows() []Row {
	rows := make([]Row, len(t.settings))
	for i, s := range t.settings {
		rows[i] = s.Row
	}
	return rows
}
