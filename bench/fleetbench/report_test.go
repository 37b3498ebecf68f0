package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The fleet's commands are the node's less the writer's SETs and the
// harness's INFO; rates are per second of window and per instance.
func TestResultTakesOutTheHarness(t *testing.T) {
	m := &Measurement{System: "s", Scenario: "writes-unheld", N: 2, FleetConns: []int{4},
		Deltas: []Delta{{Addr: "n", Seconds: 2, CPU: 0.1, Commands: 1 + 400 + 40, NetOut: 8000,
			Calls: map[string]uint64{"info": 1, "set": 400, "ping": 40}}}}
	r := m.result()
	if r.CmdsPerSec != 20 || r.CmdsPerInstance != 10 || r.WritesPerSec != 200 || r.CPUMsPerSec != 50 || r.Conns != 4 {
		t.Errorf("result %+v", r)
	}
	if got := r.commandsText(); got != "PING 10.0/s" {
		t.Errorf("top commands %q, want PING 10.0/s", got)
	}
	base := &Result{System: "s", Scenario: baselineScenario, N: 2, CPUMsPerSec: 10, NetOutPerSec: 1000}
	netOfBaseline([]*Result{r, base})
	if r.CPUUsPerWrite == nil || !near(*r.CPUUsPerWrite, 200) || r.NetOutPerWrite == nil || !near(*r.NetOutPerWrite, 15) {
		t.Errorf("per write: %v µs, %v B; want 200 µs, 15 B", r.CPUUsPerWrite, r.NetOutPerWrite)
	}
}

// A failed run is a row of the table with as many cells as the others,
// saying why, and no figures.
func TestAFailedRunIsARow(t *testing.T) {
	ok := (&Measurement{System: "s", Scenario: "idle-holding", N: 1, FleetConns: []int{1},
		Deltas: []Delta{{Addr: "n", Seconds: 1, Calls: map[string]uint64{}}}}).result()
	bad := failed("s", "writes-held", 256, errors.New("instance 3: Redis unavailable | no answer\nmore"))
	var buf bytes.Buffer
	PrintTable(&buf, []*Result{ok, bad}, false)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("table of %d lines:\n%s", len(lines), buf.String())
	}
	cells := func(l string) int { return strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") }
	for _, l := range lines[1:] {
		if cells(l) != cells(lines[0]) {
			t.Errorf("row %q has %d cell borders, the header %d", l, cells(l), cells(lines[0]))
		}
	}
	if !strings.Contains(lines[3], "failed: instance 3: Redis unavailable") || strings.Contains(lines[3], "more") {
		t.Errorf("failed row %q, want the first line of the error", lines[3])
	}
}
