package toxic

import (
	"testing"
	"time"
)

// A Delay that is set moves at the pace of the clock, so a reply read
// later never arrives sooner than one read earlier, and replies read
// together arrive together, on any connection following it: what a server that slows down, or a path whose queue
// grows, does to the replies it wrote together.
func TestADelayNeverLetsALaterReplyOvertakeAnEarlierOne(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		sets []time.Duration // one Set every 50 ms
		want time.Duration   // the delay 1 s after the last
	}{
		{"rises from none", []time.Duration{100 * ms}, 100 * ms},
		{"rises from 100 to 300 ms, the latency fault", []time.Duration{100 * ms, 300 * ms}, 300 * ms},
		{"falls back to none", []time.Duration{300 * ms, 0}, 0},
		{"turns before it arrives", []time.Duration{300 * ms, 100 * ms, 250 * ms}, 250 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDelay()
			base := time.Now()
			// Set at chosen moments, as Set would at those of the clock.
			for i, v := range tc.sets {
				at := base.Add(time.Duration(i+1) * 50 * ms)
				d.ramps = append(d.ramps, ramp{at: at, from: d.atLocked(at), to: v})
			}
			last := base.Add(time.Duration(len(tc.sets)+1)*50*ms + time.Second)
			var arrived time.Time
			const step = time.Millisecond / 4
			for at := base; at.Before(last); at = at.Add(step) {
				got := at.Add(d.At(at))
				if got.Before(arrived) {
					t.Fatalf("a reply read at %v arrives at %v, before one read earlier (%v)", at.Sub(base), got.Sub(base), arrived.Sub(base))
				}
				if !arrived.IsZero() && got.Sub(arrived) > 2*step {
					t.Fatalf("a reply read at %v arrives at %v, %v after one read %v earlier", at.Sub(base), got.Sub(base), got.Sub(arrived), step)
				}
				arrived = got
			}
			if got := d.At(last); got != tc.want {
				t.Errorf("delay %v once settled, want %v", got, tc.want)
			}
		})
	}
}

// Slow's delay holds from the first reply: it is a slow path, not one
// slowing down.
func TestSlowHoldsItsDelayFromTheStart(t *testing.T) {
	d := newDelay(150 * time.Millisecond)
	if got := d.At(time.Now()); got != 150*time.Millisecond {
		t.Fatalf("delay %v, want 150ms", got)
	}
}
