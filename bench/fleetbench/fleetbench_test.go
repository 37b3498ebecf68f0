package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// TestMain lets the test binary be a child of -mode procs: the parent
// runs its own executable again with -child first.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestSmoke runs every system through idle-holding and writes-unheld
// with two instances, briefly, against a real redis-server, as
// `go run . -n 2 -window 1s -warmup 0s` would, and checks that the
// figures and files make sense.
func TestSmoke(t *testing.T) {
	srv := redistest.Start(t)
	out := filepath.Join(t.TempDir(), "results", "smoke")
	rs := runSmoke(t, "-redis", srv.Addr, "-n", "2", "-scenarios", "idle-holding,writes-unheld", "-window", "1s", "-warmup", "0s", "-write-rate", "300", "-out", out)
	if want := 2 * len(strings.Split(defaultSystems, ",")); len(rs) != want {
		t.Fatalf("%d results, want %d: every system -systems runs by default, under both scenarios", len(rs), want)
	}
	for _, r := range rs {
		name := r.System + ", " + r.Scenario
		wantHeld := 10.0
		if r.System == "go-redis plain" {
			wantHeld = 0
		}
		if r.HeldStart != wantHeld {
			t.Errorf("%s: %.1f copies per instance after holding, want %.0f", name, r.HeldStart, wantHeld)
		}
		if r.CPUMsPerSec <= 0 || r.Seconds < 1 || r.ConnsPerInstance < 1 || len(r.Nodes) != 1 {
			t.Errorf("%s: %.1f ms/s CPU over %.1fs, %.1f connections per instance, %d nodes", name, r.CPUMsPerSec, r.Seconds, r.ConnsPerInstance, len(r.Nodes))
		}
		if r.Scenario == "writes-unheld" && (r.WritesPerSec < 100 || r.CPUUsPerWrite == nil || r.NetOutPerWrite == nil) {
			t.Errorf("%s: %.0f writes/s, per write %v µs and %v B; want writes and their cost", name, r.WritesPerSec, r.CPUUsPerWrite, r.NetOutPerWrite)
		}
		if r.System == "hotkeygen" && (len(r.TopCommands) == 0 || r.TopCommands[0].Command != "PING") {
			t.Errorf("%s: top commands %v; the invalidation session PINGs", name, r.TopCommands)
		}
	}
	svg, err := os.ReadFile(filepath.Join(filepath.Dir(out), "fleet.svg"))
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("fleet.svg is not well-formed: %v", err)
		}
	}
	for _, ext := range []string{".md", ".csv"} {
		if b, err := os.ReadFile(out + ext); err != nil || !strings.Contains(string(b), "hotkeygen") {
			t.Errorf("%s%s: %v, or it names no system", out, ext, err)
		}
	}
}

// TestProcsMode spreads three instances over two child processes: this

// The Pub/Sub systems' writer writes through a repository of their mode,
// which announces each write: a PUBLISH on the entity's channel and one
// on the key's, which the node counts beside the writer's SETs. A write
// of a key nobody holds costs the node more bytes with invalidate=pubsub,
// whose every holder hears it, than with pubsub-keys.
func TestSmokeOfTheAnnouncingSystems(t *testing.T) {
	srv := redistest.Start(t)
	out := filepath.Join(t.TempDir(), "results", "smoke")
	rs := runSmoke(t, "-redis", srv.Addr, "-systems", "hotkeygen-pubsub,hotkeygen-pubsub-keys", "-n", "1", "-scenarios", "idle-holding,writes-unheld", "-window", "1s", "-warmup", "0s", "-write-rate", "300", "-out", out)
	if len(rs) != 4 {
		t.Fatalf("%d results, want 4", len(rs))
	}
	bytes := map[string]float64{}
	for _, r := range rs {
		if r.Scenario != "writes-unheld" {
			continue
		}
		published := slices.ContainsFunc(r.TopCommands, func(c CommandRate) bool { return c.Command == "PUBLISH" })
		if r.WritesPerSec < 100 || r.NetOutPerWrite == nil || !published {
			t.Fatalf("%s: %.0f writes/s, %v B per write, top commands %v; want writes announced with PUBLISH", r.System, r.WritesPerSec, r.NetOutPerWrite, r.TopCommands)
		}
		bytes[r.System] = *r.NetOutPerWrite
	}
	if bytes["hotkeygen pubsub"] <= bytes["hotkeygen pubsub-keys"] {
		t.Fatalf("bytes out per unheld write: pubsub %.0f, pubsub-keys %.0f; want pubsub's more (the instance holding a copy of the entity hears it)", bytes["hotkeygen pubsub"], bytes["hotkeygen pubsub-keys"])
	}
}

// test binary run again, as -mode procs runs fleetbench.
func TestProcsMode(t *testing.T) {
	srv := redistest.Start(t)
	rs := runSmoke(t, "-redis", srv.Addr, "-mode", "procs", "-procs", "2", "-n", "3", "-systems", "hotkeygen,csc", "-scenarios", "idle-holding",
		"-window", "1s", "-warmup", "0s", "-out", filepath.Join(t.TempDir(), "procs"))
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if r.N != 3 || r.HeldStart != 10 || r.ConnsPerInstance < 1 {
			t.Errorf("%s: N %d, %.1f copies and %.1f connections per instance; want 3 instances holding 10 copies each", r.System, r.N, r.HeldStart, r.ConnsPerInstance)
		}
	}
}

func runSmoke(t *testing.T, args ...string) []*Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("fleetbench %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	t.Log("\n" + stdout.String())
	out := args[len(args)-1]
	js, err := os.ReadFile(out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []*Result `json:"results"`
	}
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	return got.Results
}
