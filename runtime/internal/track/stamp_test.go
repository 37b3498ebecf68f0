package track

import (
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
)

// A wall time converts to the stamp it would have had: an expiry d after
// a reading of the wall clock is d after that reading's stamp, whatever
// time passed between the reading and the conversion (the wall and the
// monotonic clock advance alike; only a step of the wall clock between
// the two would move it). No expiry stays none, and one long past stays
// in the past.
func TestStampsConvertAWallTime(t *testing.T) {
	var wall Stamps
	for _, d := range []time.Duration{0, time.Millisecond, time.Hour, -time.Minute} {
		at := time.Now()
		got := wall.FromUnixNano(at.Add(d).UnixNano())
		if diff := time.Duration(got - (wall.Of(at) + int64(d))); diff < -time.Millisecond || diff > time.Millisecond {
			t.Errorf("an expiry %v after a reading converts %v away from that reading's stamp plus %v", d, diff, d)
		}
	}
	if got := wall.FromUnixNano(0); got != 0 {
		t.Errorf("no expiry converts to %d, want 0", got)
	}
	if got := wall.FromUnixNano(1); got == 0 || got >= wall.Now() {
		t.Errorf("an expiry in 1970 converts to %d, not before now (%d)", got, wall.Now())
	}
	if a, b := wall.Now(), wall.Now(); b < a {
		t.Errorf("wall stamps went back: %d then %d", a, b)
	}

	clk := fakeclock.New(time.Unix(1_700_000_000, 0))
	test := NewStamps(clk.Now)
	if got, want := test.Now(), clk.Now().UnixNano(); got != want {
		t.Errorf("a test clock's stamp %d, want its UnixNano %d", got, want)
	}
	if got := test.FromUnixNano(42); got != 42 {
		t.Errorf("a test clock converts 42 to %d", got)
	}
	if opts := (Options{Now: clk.Now, Clock: clk}); opts.Stamps().Now() != clk.Now().UnixNano() {
		t.Error("Options with a Clock do not stamp by it")
	}
	if opts := (Options{Now: time.Now}); opts.Stamps().now != nil {
		t.Error("Options without a Clock do not stamp by the monotonic clock")
	}
}
