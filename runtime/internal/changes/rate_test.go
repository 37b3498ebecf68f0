package changes

import (
	"testing"
	"time"
)

// TestRate: the rate is taken over the last minute of samples; a sample
// within a second of the one before the newest replaces the newest, so
// the samples stay a second apart; an idle minute brings the rate to 0.
func TestRate(t *testing.T) {
	type sample struct {
		at    time.Duration
		total uint64
	}
	for _, tc := range []struct {
		name    string
		samples []sample
		want    float64
	}{
		{"no sample says nothing", nil, 0},
		{"one sample says nothing", []sample{{0, 5}}, 0},
		{"two samples", []sample{{0, 0}, {2 * time.Second, 10}}, 5},
		{"a sample within a second replaces the newest", []sample{{0, 0}, {500 * time.Millisecond, 5}, {800 * time.Millisecond, 8}}, 10},
		{"samples older than a minute before the newest are left out", []sample{{0, 0}, {30 * time.Second, 300}, {90 * time.Second, 600}}, 5},
		{"an idle minute is 0", []sample{{0, 0}, {30 * time.Second, 300}, {200 * time.Second, 300}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rate
			for _, s := range tc.samples {
				r.add(epoch.Add(s.at), s.total)
			}
			if got := r.perSec(); got != tc.want {
				t.Errorf("perSec = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("more samples than the ring holds", func(t *testing.T) {
		var r rate
		for i := range 3 * rateSamples {
			r.add(epoch.Add(time.Duration(i)*time.Second), uint64(i)*10)
		}
		if got := r.perSec(); got != 10 {
			t.Errorf("perSec = %v, want 10", got)
		}
	})
}
