package aggregate

import (
	"slices"
	"testing"
)

// The queue hands out the slots added, oldest first, once; past Slots
// of them the oldest are dropped.
func TestQueueKeepsTheLastWindowOfSlots(t *testing.T) {
	for _, tc := range []struct {
		name  string
		added int
		want  []int64 // the slots taken
	}{
		{"none", 0, nil},
		{"one", 1, []int64{1}},
		{"a window", Slots, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"more than a window", Slots + 3, []int64{4, 5, 6, 7, 8, 9, 10, 11, 12, 13}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q Queue
			for s := range int64(tc.added) {
				q.Add(Ended{Slot: s + 1, Reads: uint64(10 * (s + 1))})
			}
			if q.Waiting() != (tc.added > 0) {
				t.Fatalf("Waiting = %v with %d added", q.Waiting(), tc.added)
			}
			var got []int64
			for _, e := range q.Take() {
				if e.Reads != uint64(10*e.Slot) {
					t.Fatalf("slot %d with %d reads, want %d", e.Slot, e.Reads, 10*e.Slot)
				}
				got = append(got, e.Slot)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("took %v, want %v", got, tc.want)
			}
			if q.Waiting() || q.Take() != nil {
				t.Fatal("the queue is not empty after Take")
			}
		})
	}
}

// A run of failures is reported first once, and its end once.
func TestHealthReportsTheFirstFailureAndTheRecovery(t *testing.T) {
	var h Health
	steps := []struct {
		fail bool
		want bool // Failed's first, or Works's recovered
	}{
		{false, false}, {true, true}, {true, false}, {true, false}, {false, true}, {false, false}, {true, true},
	}
	for i, s := range steps {
		var got bool
		if s.fail {
			got = h.Failed()
		} else {
			got = h.Works()
		}
		if got != s.want {
			t.Fatalf("step %d (failed %v) = %v, want %v", i, s.fail, got, s.want)
		}
	}
}
