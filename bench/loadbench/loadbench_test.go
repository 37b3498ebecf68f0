package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// TestSmoke runs every system through every workload briefly, as
// `go run . -duration 800ms -keys 2000` would, against a real redis-server,
// and checks that the figures make sense. Without redis-server it fails,
// saying how to install it.
func TestSmoke(t *testing.T) {
	srv := redistest.Start(t)
	out := filepath.Join(t.TempDir(), "smoke")
	var stdout, stderr bytes.Buffer
	args := []string{"-redis", srv.Addr, "-duration", "800ms", "-keys", "2000", "-workers", "4", "-crowd-every", "400ms", "-out", out}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("loadbench %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	t.Log("\n" + stdout.String())

	var got struct {
		Results []*Result `json:"results"`
	}
	js, err := os.ReadFile(out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(js), "\n"); lines != len(got.Results)+3 {
		t.Errorf("the JSON has %d lines, want the meta and each result on a line of its own", lines)
	}
	if len(got.Results) != len(systems)*3 {
		t.Fatalf("%d results, want %d: every system under every workload", len(got.Results), len(systems)*3)
	}
	csvFile, err := os.ReadFile(out + ".csv")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(csvFile), "\n"); lines != len(got.Results)+1 {
		t.Errorf("the CSV has %d lines, want a header and %d rows", lines, len(got.Results))
	}

	for _, r := range got.Results {
		name := r.System + ", " + r.Workload
		if !strings.Contains(stdout.String(), r.System) {
			t.Errorf("%s: not in the table", name)
		}
		if r.Reads == 0 || r.ReadsPerSec <= 0 || r.P50Us <= 0 || r.P99Us < r.P50Us || r.P999Us < r.P99Us {
			t.Errorf("%s: %d reads, %.0f/s, p50 %.1f µs, p99 %.1f µs, p99.9 %.1f µs", name, r.Reads, r.ReadsPerSec, r.P50Us, r.P99Us, r.P999Us)
		}
		if r.Errors != 0 {
			t.Errorf("%s: %d errors, the last %s", name, r.Errors, r.LastError)
		}
		if r.RedisCommands == 0 || r.Commands["get"] == 0 || r.RedisReads == 0 || r.HottestAtRedisPerSec <= 0 {
			t.Errorf("%s: %d commands (%d GETs), %d reads at Redis, hottest at %.0f/s: every system reads Redis on a miss",
				name, r.RedisCommands, r.Commands["get"], r.RedisReads, r.HottestAtRedisPerSec)
		}
		if r.Commands["info"] != 0 || r.Commands["config|resetstat"] != 0 {
			t.Errorf("%s: the harness's own INFO and CONFIG are counted", name)
		}
		if strings.Contains(r.Workload, "writes") != (r.Writes > 0) {
			t.Errorf("%s: %d writes", name, r.Writes)
		}
		switch r.System {
		case "go-redis":
			// Every read is a GET, and a GET that starts after a write was
			// acknowledged sees it: a stale read here is a harness bug.
			if r.LocalShare > 0.001 || r.Commands["get"] < r.Reads || r.HottestOfferedAtRedis < 0.999 {
				t.Errorf("%s: %.2f%% served locally, %d GETs for %d reads", name, 100*r.LocalShare, r.Commands["get"], r.Reads)
			}
			if r.StaleReads != 0 {
				t.Errorf("%s: %d stale reads without any cache", name, r.StaleReads)
			}
		case "hotkeygen", "hotkeygen (pool)", "hotkeygen (pipeline)":
			// Only keys read above hot_qps (50) are served locally, so the
			// share follows the rate the machine drives: 16.9% at 2,869
			// reads/s on loaded cores. The hottest key alone passes the
			// threshold, and takes a tenth of the reads, from a few hundred
			// reads a second.
			if r.LocalShare < 0.05 {
				t.Errorf("%s: only %.1f%% of reads served locally", name, 100*r.LocalShare)
			}
		default:
			// The others keep every key they read.
			if r.LocalShare < 0.2 {
				t.Errorf("%s: only %.1f%% of reads served locally", name, 100*r.LocalShare)
			}
		}
	}

	for _, r := range got.Results {
		name := r.System + ", " + r.Workload
		switch {
		case r.System == "go-redis/cache" && r.Writes > 0:
			// Its local copies never hear of writes made elsewhere: the
			// stale-read accounting must catch it.
			if r.StaleReads == 0 || r.StaleBeyondBound == 0 {
				t.Errorf("%s: %d stale reads, %d beyond the bound; a cache without invalidation must show some", name, r.StaleReads, r.StaleBeyondBound)
			}
		case (r.System == "hotkeygen" || r.System == "rueidis") && r.Writes > 0:
			if r.LongestStaleMs > 1000 {
				t.Errorf("%s: a read was stale for %.0f ms despite invalidation", name, r.LongestStaleMs)
			}
		case r.System == "hotkeygen" && strings.Contains(r.Workload, "flash"):
			if len(r.Crowd) == 0 || r.Crowd[0].Phase != 0 || r.Crowd[0].PromotedMs < 0 || r.DetectMs == nil {
				t.Errorf("%s: the first flash crowd was not followed: %+v", name, r.Crowd)
			}
			if r.Extras["hot_keys"] == 0 || r.HeapBytes <= 0 {
				t.Errorf("%s: %.0f hot keys, heap %d bytes", name, r.Extras["hot_keys"], r.HeapBytes)
			}
		}
	}
}
