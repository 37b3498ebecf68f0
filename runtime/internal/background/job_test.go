package background

import (
	"context"
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
)

// A job runs once at a time: runs started while one waits are skipped,
// the first skip logged, and when the run ends, how many were skipped.
func TestJobRunsOnceAtATime(t *testing.T) {
	var (
		j    Job
		g    group.Group
		l    logs
		ran  = make(chan struct{}, 4)
		gate = make(chan struct{})
	)
	defer g.Close()
	f := func() { ran <- struct{}{}; <-gate }
	if !j.Start(context.Background(), &g, l.logger(), "refresh", f) {
		t.Fatal("the first run did not start")
	}
	<-ran
	for range 3 {
		if j.Start(context.Background(), &g, l.logger(), "refresh", f) {
			t.Fatal("a run started while the last one waits")
		}
	}
	if n := len(l.with("still waits on Redis")); n != 1 {
		t.Fatalf("%d lines about the skipped runs while one waits, want 1", n)
	}
	close(gate)
	j.Wait()
	if lines := l.with("background work ended"); len(lines) != 1 || !strings.Contains(lines[0], "skipped_runs=3") {
		t.Fatalf("lines at the end of the run: %q, want one saying 3 runs were skipped", lines)
	}
	if !j.Start(context.Background(), &g, l.logger(), "refresh", func() {}) {
		t.Fatal("a run did not start after the last one ended")
	}
	j.Wait()
	if n := len(l.with("background work ended")); n != 1 {
		t.Fatalf("a run that skipped none logged its end: %d lines", n)
	}
}

// A run that ends after its Cache closed logs nothing of the runs it
// held up; a job of a closed group does not start, and can start later.
func TestJobOfAClosingCache(t *testing.T) {
	var (
		j    Job
		g    group.Group
		l    logs
		gate = make(chan struct{})
	)
	ctx, cancel := context.WithCancel(context.Background())
	j.Start(ctx, &g, l.logger(), "cluster read", func() { <-gate })
	j.Start(ctx, &g, l.logger(), "cluster read", func() {})
	cancel()
	close(gate)
	g.Close()
	if lines := l.with("background work ended"); len(lines) != 0 {
		t.Fatalf("a closing Cache's run logged %q", lines)
	}
	if j.Start(ctx, &g, l.logger(), "cluster read", func() { t.Error("ran on a closed group") }) {
		t.Fatal("a run started on a closed group")
	}
	var open group.Group
	defer open.Close()
	if !j.Start(ctx, &open, l.logger(), "cluster read", func() {}) {
		t.Fatal("the job stayed taken after a run that did not start")
	}
}
