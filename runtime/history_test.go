package runtime

import (
	"testing"
	"time"
)

func TestHistoryRates(t *testing.T) {
	var h history
	t0 := time.Unix(1000, 0)
	if got := h.samples(); got != nil {
		t.Fatalf("empty history = %v", got)
	}
	h.add(total{at: t0})
	h.add(total{at: t0.Add(500 * time.Millisecond), reads: 50, hits: 50}) // under a second: ignored
	h.add(total{at: t0.Add(time.Second), reads: 100, hits: 60, errs: 3, stales: 7})
	h.add(total{at: t0.Add(3 * time.Second), reads: 300, hits: 260, errs: 3, stales: 27}) // two seconds later
	got := h.samples()
	want := []Sample{
		{At: t0.Add(time.Second), Reads: 100, Hits: 60, RedisReads: 40, RedisErrors: 3, StaleReads: 7},
		{At: t0.Add(3 * time.Second), Reads: 100, Hits: 100, RedisReads: 0, RedisErrors: 0, StaleReads: 10},
	}
	if len(got) != len(want) {
		t.Fatalf("samples = %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i] != want[i] {
			t.Fatalf("sample %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestHistoryKeepsTenMinutes(t *testing.T) {
	var h history
	t0 := time.Unix(1000, 0)
	for i := range 2 * HistoryLen {
		h.add(total{at: t0.Add(time.Duration(i) * time.Second), reads: uint64(i * 10)})
	}
	got := h.samples()
	if len(got) != HistoryLen {
		t.Fatalf("%d samples, want %d", len(got), HistoryLen)
	}
	last := t0.Add(time.Duration(2*HistoryLen-1) * time.Second)
	if !got[len(got)-1].At.Equal(last) || !got[0].At.Equal(last.Add(-(HistoryLen-1)*time.Second)) {
		t.Fatalf("window %v..%v, want the last %d seconds up to %v", got[0].At, got[len(got)-1].At, HistoryLen, last)
	}
	for _, s := range got {
		if s.Reads != 10 {
			t.Fatalf("sample %+v: want 10 reads/s", s)
		}
	}
}

func TestCacheHistoryCountsHitsAndRedisReads(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.tick(time.Second) // first mark
	e.heat("p:1")       // 99 cold reads, the promoting miss, a hit
	for range 20 {
		e.get("p:1")
	}
	e.tick(time.Second)
	h := e.c.History()
	if len(h) == 0 {
		t.Fatal("no history after two ticks")
	}
	s := h[len(h)-1]
	if s.Reads != 121 || s.Hits != 21 || s.RedisReads != 100 {
		t.Fatalf("last sample %+v: want 121 reads, 21 hits, 100 Redis reads a second", s)
	}
}
