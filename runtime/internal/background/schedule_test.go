package background

import (
	"testing"
	"time"
)

// The tick's period is the slot, or the shortest interval of a job that
// runs; a job of interval 0 never does.
func TestSchedulePeriod(t *testing.T) {
	for _, tc := range []struct {
		name                              string
		slot                              time.Duration
		promote, demote, refresh, monitor time.Duration
		want                              time.Duration
	}{
		{"the slot", time.Second, 5 * time.Second, time.Minute, 10 * time.Second, time.Minute, time.Second},
		{"a shorter refresh", time.Second, 5 * time.Second, time.Minute, 300 * time.Millisecond, time.Minute, 300 * time.Millisecond},
		{"intervals of 0 run never", time.Second, 5 * time.Second, time.Minute, 0, 0, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := New(tc.slot, epoch, tc.promote, tc.demote, tc.refresh, tc.monitor).Period; got != tc.want {
				t.Fatalf("Period = %v, want %v", got, tc.want)
			}
		})
	}
}

// A job is due at its time, or up to half a tick before it, then every
// interval after the time it was due; one that fell behind runs once,
// and next an interval after now. A job of interval 0 is never due.
func TestScheduleDue(t *testing.T) {
	s := New(time.Second, epoch, 5*time.Second, time.Minute, 0, time.Minute)
	for _, tc := range []struct {
		at   time.Duration // since epoch
		want bool
	}{
		{4 * time.Second, false},
		{4*time.Second + 499*time.Millisecond, false},
		{4*time.Second + 500*time.Millisecond, true}, // half a tick early
		{5 * time.Second, false},                     // next at 10s
		{10 * time.Second, true},
		{40 * time.Second, true}, // fell behind: once, and next at 45s
		{41 * time.Second, false},
		{44*time.Second + 500*time.Millisecond, true},
	} {
		if got := s.Due(&s.Promote, epoch.Add(tc.at)); got != tc.want {
			t.Fatalf("promotion due at %v = %v, want %v", tc.at, got, tc.want)
		}
	}
	for at := time.Duration(0); at < time.Hour; at += time.Second {
		if s.Due(&s.Refresh, epoch.Add(at)) {
			t.Fatalf("a refresh of interval 0 was due at %v", at)
		}
	}
}
