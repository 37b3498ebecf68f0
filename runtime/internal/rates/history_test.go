package rates

import (
	"testing"
	"time"
)

func TestHistoryRates(t *testing.T) {
	h := New(600)
	t0 := time.Unix(1000, 0)
	if got := h.Rates(); got != nil {
		t.Fatalf("empty history = %v", got)
	}
	h.Add(Totals{At: t0})
	h.Add(Totals{At: t0.Add(500 * time.Millisecond), Reads: 50, Hits: 50}) // under a second: ignored
	h.Add(Totals{At: t0.Add(time.Second), Reads: 100, Hits: 60, Errs: 3, Stales: 7})
	h.Add(Totals{At: t0.Add(3 * time.Second), Reads: 300, Hits: 260, Errs: 3, Stales: 27}) // two seconds later
	got := h.Rates()
	want := []Rate{
		{At: t0.Add(time.Second), Reads: 100, Hits: 60, RedisReads: 40, RedisErrors: 3, StaleReads: 7},
		{At: t0.Add(3 * time.Second), Reads: 100, Hits: 100, RedisReads: 0, RedisErrors: 0, StaleReads: 10},
	}
	if len(got) != len(want) {
		t.Fatalf("rates = %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i] != want[i] {
			t.Fatalf("rate %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestHistoryKeepsItsLength(t *testing.T) {
	const samples = 600
	h := New(samples)
	t0 := time.Unix(1000, 0)
	for i := range 2 * samples {
		h.Add(Totals{At: t0.Add(time.Duration(i) * time.Second), Reads: uint64(i * 10)})
	}
	got := h.Rates()
	if len(got) != samples {
		t.Fatalf("%d rates, want %d", len(got), samples)
	}
	last := t0.Add(time.Duration(2*samples-1) * time.Second)
	if !got[len(got)-1].At.Equal(last) || !got[0].At.Equal(last.Add(-(samples-1)*time.Second)) {
		t.Fatalf("window %v..%v, want the last %d seconds up to %v", got[0].At, got[len(got)-1].At, samples, last)
	}
	for _, r := range got {
		if r.Reads != 10 {
			t.Fatalf("rate %+v: want 10 reads/s", r)
		}
	}
}
