package soak

import (
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
)

// A stale read's trail lists, in the order they happened, the writes of
// its key, the reading instance's reads of it folded by version, the
// outages, and what that instance's runtime logged; other keys and other
// instances' reads and logs stay out.
func TestATrailTellsWhatHappenedAroundAStaleRead(t *testing.T) {
	ms := time.Millisecond
	read := func(inst int, key, v int64, at time.Duration) history.Op {
		return history.Op{Kind: history.Read, Instance: inst, Key: key, Version: v, Start: at, End: at + ms}
	}
	write := history.Op{Kind: history.Write, Instance: -1, Key: 2, Version: 8, Start: 1000 * ms, End: 1002 * ms}
	ops := []history.Op{
		read(1, 2, 7, 990*ms), read(1, 2, 7, 995*ms), write, read(0, 2, 8, 1003*ms),
		read(1, 3, 1, 1010*ms), read(1, 2, 7, 1060*ms),
	}
	stale := history.Stale{Read: ops[5], Newer: write, Late: 58 * ms}
	run := history.Run{Outages: []history.Window{{From: 900 * ms, To: 950 * ms}}}
	events := []event{
		{at: 940 * ms, inst: 1, msg: "Redis unreachable"},
		{at: 941 * ms, inst: 0, msg: "Redis unreachable"},
		{at: 1050 * ms, inst: 1, msg: "Redis answers again"},
	}
	got := trail(ops, stale, run, events)
	want := []string{
		"0.9000s outage to 950ms",
		"0.9400s instance 1 logged: Redis unreachable",
		"0.9900s instance 1 read version 7, 2 reads to 996ms",
		"1.0000s writer -1 wrote version 8, acknowledged at 1.002s",
		"1.0500s instance 1 logged: Redis answers again",
		"1.0600s instance 1 read version 7, 1 reads to 1.061s",
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")[1:]
	if len(lines) != len(want) {
		t.Fatalf("trail:\n%s\nwant %d lines", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %q, want it to hold %q", i, lines[i], w)
		}
	}
}
