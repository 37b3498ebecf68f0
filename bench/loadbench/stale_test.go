package main

import (
	"errors"
	"testing"
	"time"
)

func TestStalenessConstructedEvents(t *testing.T) {
	s := NewStaleness(10, 50*time.Millisecond)
	// A read that began before the write was acknowledged may return the
	// old value.
	before := s.Before(3)
	t0 := time.Now() // the write is acknowledged between t0 and t1
	if err := s.Write(3, func(v int64) error {
		if v != 1 {
			t.Errorf("first write got version %d, want 1", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	s.Observe(3, before, 0, time.Now())
	// A read that began after it and returned the new value is fresh.
	s.Observe(3, s.Before(3), 1, time.Now())
	// Another key's writes say nothing about key 4.
	s.Observe(4, s.Before(4), 0, time.Now())
	if n, _, _ := s.StaleCounts(); n != 0 {
		t.Fatalf("%d stale reads counted among fresh ones", n)
	}

	// A read that began 100ms after the ack and returned version 0 is
	// stale, for longer than the bound. The times are the test's, not the
	// scheduler's: on a loaded machine time.Now() may be anywhere later.
	s.Observe(3, s.Before(3), 0, t1.Add(100*time.Millisecond))
	// One that began no later than the ack is stale too, within the bound.
	s.Observe(3, s.Before(3), 0, t0)
	stale, beyond, longest := s.StaleCounts()
	if stale != 2 || beyond != 1 {
		t.Errorf("stale, beyond the bound = %d, %d; want 2, 1", stale, beyond)
	}
	if most := t1.Sub(t0) + 100*time.Millisecond; longest < 100*time.Millisecond || longest > most {
		t.Errorf("longest staleness %v, want 100ms to %v", longest, most)
	}
}

func TestStalenessFailedWrite(t *testing.T) {
	s := NewStaleness(1, time.Second)
	s.Write(0, func(int64) error { return nil })                   // version 1
	s.Write(0, func(int64) error { return errors.New("timeout") }) // version 2, may have landed
	if err := s.Write(0, func(v int64) error {                     // version 3
		if v != 3 {
			t.Errorf("write after a failed one got version %d, want 3", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Version 2 may be read (the failed write landed), and is stale once 3
	// is acknowledged; version 1 is stale since 2 or 3 superseded it.
	s.Observe(0, s.Before(0), 2, time.Now())
	s.Observe(0, s.Before(0), 1, time.Now())
	s.Observe(0, s.Before(0), 3, time.Now())
	if stale, _, _ := s.StaleCounts(); stale != 2 {
		t.Errorf("%d stale reads, want 2", stale)
	}
}

// frozen is a deliberately stale reader: a cache that never learns of
// writes, serving the versions it saw first.
type frozen map[int64]int64

func TestStalenessDetectsFrozenReader(t *testing.T) {
	s := NewStaleness(100, time.Millisecond)
	cache := frozen{}
	for id := range int64(100) {
		cache[id] = 0
	}
	for id := range int64(50) { // half the keys are written once
		s.Write(id, func(int64) error { return nil })
	}
	time.Sleep(2 * time.Millisecond)
	for id := range int64(100) {
		s.Observe(id, s.Before(id), cache[id], time.Now())
	}
	stale, beyond, longest := s.StaleCounts()
	if stale != 50 || beyond != 50 || longest < 2*time.Millisecond {
		t.Errorf("frozen reader: %d stale, %d beyond the bound, longest %v; want 50, 50, at least 2ms", stale, beyond, longest)
	}
}
