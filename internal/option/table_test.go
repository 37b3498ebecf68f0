package option

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// A table's rows set their fields to their defaults, in the order they
// were declared, and publish what the other packages read of them.
func TestTableDeclaresRowsInOrder(t *testing.T) {
	tb := newTable()
	wait := tb.Duration("wait", "Wait", time.Second, PositiveDuration)
	tb.Rate("rate", "Rate", 3000)
	tb.Fraction("share", "Share", 0.05, BelowOne)
	tb.Count("n", "N", 10, Positive)
	tb.Size("bytes", "Bytes", 16<<10)
	tb.Toggle("on", "On", true).ProgramOnly()
	mode := tb.Choice("mode", "Mode", "a", Word{Text: "a", Const: "ModeA"}, Word{Text: "b", Const: "ModeB"})

	var c config
	tb.Defaults(&c)
	want := config{Wait: time.Second, Rate: 3000, Share: 0.05, N: 10, Bytes: 16 << 10, On: true, Mode: "a"}
	if c != want {
		t.Fatalf("Defaults set %+v, want %+v", c, want)
	}
	var names []string
	var kinds []Kind
	for _, r := range tb.Rows() {
		names, kinds = append(names, r.Name), append(kinds, r.Kind)
		if r.Directive != (r.Name != "on") {
			t.Errorf("%s: Directive %v; only ProgramOnly's row is not a directive's", r.Name, r.Directive)
		}
	}
	if want := []string{"wait", "rate", "share", "n", "bytes", "on", "mode"}; !slices.Equal(names, want) {
		t.Errorf("rows %q, want %q", names, want)
	}
	if want := []Kind{Duration, Rate, Fraction, Count, Size, Toggle, Choice}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if got := mode.Row.Words(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("the choice's words are %q", got)
	}
	if tb.Settings()[0] != wait.Self() {
		t.Error("the first setting is not the first row's")
	}
}

// With sets its field alone and records it written; the row's With is
// the same function, typed for the annotations to call.
func TestWithSetsItsFieldAndRecordsIt(t *testing.T) {
	tb := newTable()
	wait := tb.Duration("wait", "Wait", time.Second)
	n := tb.Count("n", "N", 10)
	var c config
	tb.Defaults(&c)
	n.With(3)(&c)
	if c.N != 3 || c.Wait != time.Second {
		t.Fatalf("With(3) of n left %+v", c)
	}
	if !n.Written(&c) || wait.Written(&c) {
		t.Fatalf("written: n %v, wait %v; want n alone", n.Written(&c), wait.Written(&c))
	}
	with, ok := wait.Row.With.(func(time.Duration) set)
	if !ok {
		t.Fatalf("the row's With is a %T, want a func(time.Duration) set", wait.Row.With)
	}
	with(time.Minute)(&c)
	if c.Wait != time.Minute || !wait.Written(&c) || wait.Value(&c) != time.Minute {
		t.Fatalf("the row's With left %+v", c)
	}
}

// Check returns every rule broken, in the order of the rows, each as
// the table's error naming its option.
func TestCheckReportsEveryBrokenRule(t *testing.T) {
	tb := newTable()
	tb.Duration("wait", "Wait", time.Second, PositiveDuration, Expiry)
	tb.Fraction("share", "Share", 0.05, BelowOne)
	tb.Count("n", "N", 10, Positive)
	tb.Choice("mode", "Mode", "a", Word{Text: "a"}, Word{Text: "b"}, Word{Text: "c"})
	var c config
	tb.Defaults(&c)
	if errs := tb.Check(&c); errs != nil {
		t.Fatalf("the defaults break %q", messages(errs))
	}
	c = config{Wait: -time.Second, Share: 1, N: 0, Mode: "d"}
	want := []string{
		"wait: must be a positive duration, got -1s",
		"share: must be a fraction from 0 up to but not including 1, got 1",
		"n: must be positive, got 0",
		`mode: must be "a", "b" or "c", got "d"`,
	}
	if got := messages(tb.Check(&c)); !slices.Equal(got, want) {
		t.Fatalf("Check = %q, want %q", got, want)
	}
}

// An option written while the feature it tunes is off is reported; one
// left alone is not, nor any while the feature is on.
func TestWrittenWhileOff(t *testing.T) {
	tb := newTable()
	wait := tb.Duration("wait", "Wait", time.Second)
	n := tb.Count("n", "N", 10)
	var c config
	n.With(3)(&c)
	if errs := WrittenWhileOff(&c, true, "the feature", "on=on", wait, n); errs != nil {
		t.Fatalf("with the feature on: %q", messages(errs))
	}
	want := []string{"n: applies only to the feature, which is off; add on=on, or remove n"}
	if got := messages(WrittenWhileOff(&c, false, "the feature", "on=on", wait, n)); !slices.Equal(got, want) {
		t.Fatalf("with the feature off: %q, want %q", got, want)
	}
	if err := n.Errorf("bad %d", 7); err.Error() != "invalid n: bad 7" {
		t.Fatalf("Errorf = %q", err)
	}
}

// A row whose field the configuration lacks, or holds in another type,
// stops the program at its initialization; so does a 65th row.
func TestDeclareRefusesWhatTheConfigurationCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		declare func(*Table[config, set])
	}{
		{"no such field", func(tb *Table[config, set]) { tb.Count("x", "X", 1) }},
		{"a field of another type", func(tb *Table[config, set]) { tb.Count("wait", "Wait", 1) }},
		{"more than 64 rows", func(tb *Table[config, set]) {
			for range maxOptions + 1 {
				tb.Count("n", "N", 1)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "has no field") {
					t.Fatalf("recovered %v, want a panic naming the field", r)
				}
			}()
			tc.declare(newTable())
		})
	}
}

func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  string
		want string // part of msg; "" when the value keeps the rule
	}{
		{"positive duration", PositiveDuration(time.Second), ""},
		{"zero duration", PositiveDuration(0), "must be a positive duration, got 0s"},
		{"0 disables", Disables(0), ""},
		{"negative disables", Disables(-time.Second), "must not be negative (0 disables it), got -1s"},
		{"no expiry", Expiry(0), ""},
		{"an expiry of a millisecond", Expiry(time.Millisecond), ""},
		{"a sub-millisecond expiry", Expiry(time.Microsecond), "Redis expiries have millisecond resolution, got 1µs"},
		{"a millisecond", AMillisecond(time.Millisecond), ""},
		{"less than a millisecond", AMillisecond(time.Microsecond), "must be at least 1ms, got 1µs"},
		{"one", Positive(1), ""},
		{"zero", Positive(0), "must be positive, got 0"},
		{"zero fraction", BelowOne(0), ""},
		{"one as a fraction", BelowOne(1), "must be a fraction from 0 up to but not including 1, got 1"},
		{"a negative fraction", BelowOne(-0.1), "got -0.1"},
		{"NaN", BelowOne(math.NaN()), "got NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.want == "") != (tc.msg == "") || !strings.Contains(tc.msg, tc.want) {
				t.Fatalf("%q, want %q", tc.msg, tc.want)
			}
		})
	}
}
