package main

import (
	"context"
	"testing"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// TestComparison runs the comparison small, and checks what BENCHMARKS.md
// says of its counts: a hash reads a collection in one round trip and one
// command (HGETALL: an owner that is not hot keeps no copy, so its read
// asks no PTTL), deletes it
// in one round trip and one command, and adds an item in one round trip
// (one script), while the String layout needs a SCAN before it can read or
// delete.
// Memory is reported, not judged: it depends on the item's size and the
// server's encoding thresholds.
func TestComparison(t *testing.T) {
	srv := redistest.Start(t)
	rows, err := run(context.Background(), srv.Addr, 200, []int{3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want the String layout and four hash runs", len(rows))
	}
	for _, r := range rows {
		if r.Bytes <= 0 {
			t.Errorf("%s: MEMORY USAGE summed to %d", r.Layout, r.Bytes)
		}
		if r.Layout == (stringLayout{}).name() {
			if r.Read.Trips < 2 || r.Logout.Trips < 2 || r.Add.Trips != 1 {
				t.Errorf("String layout: read %d, log out %d, add %d round trips; want a SCAN before read and log out", r.Read.Trips, r.Logout.Trips, r.Add.Trips)
			}
			continue
		}
		for op, c := range map[string]cost{"log out": r.Logout, "add": r.Add} {
			if c.Trips != 1 || c.Cmds != 1 {
				t.Errorf("%s: %s took %d round trips, %d commands; want one of each", r.Layout, op, c.Trips, c.Cmds)
			}
		}
		if r.Read.Trips != 1 || r.Read.Cmds != 1 {
			t.Errorf("%s: read took %d round trips, %d commands; want one HGETALL", r.Layout, r.Read.Trips, r.Read.Cmds)
		}
		if r.Read.ServerCmds != 1 || r.Logout.ServerCmds != 1 {
			t.Errorf("%s: Redis ran %d commands to read and %d to log out, want 1 (HGETALL) and 1 (DEL)", r.Layout, r.Read.ServerCmds, r.Logout.ServerCmds)
		}
	}
}
