package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// stepClock is a manual runtime.Clock whose ticker the test drives: the
// Cache's own goroutine runs each tick, as it would on a wall clock.
type stepClock struct {
	mu    sync.Mutex
	now   time.Time
	ticks chan time.Time
}

func newStepClock(start time.Time) *stepClock {
	return &stepClock{now: start, ticks: make(chan time.Time)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) NewTicker(time.Duration) (<-chan time.Time, func()) { return c.ticks, func() {} }

// step moves the clock by d and returns once the Cache has run its tick:
// the tick loop takes the second send only after the first tick is done,
// and a second tick at the same time has nothing left to do.
func (c *stepClock) step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	c.mu.Unlock()
	c.ticks <- now
	c.ticks <- now
}

type item struct{ ID string }

// replica is one instance of a service with aggregation on.
type replica struct {
	c     *runtime.Cache[string, item]
	clock *stepClock
}

func newReplica(t *testing.T, rdb redis.UniversalClient, entity string, start time.Time) *replica {
	t.Helper()
	clk := newStepClock(start)
	glue := runtime.Glue[string, item]{Key: func(k string) string { return k }, Clone: func(v *item) *item { c := *v; return &c }}
	c, err := runtime.New(rdb, glue, runtime.WithEntity(entity), runtime.WithClock(clk), runtime.WithAggregate(true),
		runtime.WithInvalidate(runtime.InvalidateOff))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &replica{c: c, clock: clk}
}

// read reads key n times; GetMany records each occurrence.
func (r *replica) read(t *testing.T, key string, n int) {
	t.Helper()
	if _, err := r.c.GetMany(context.Background(), slices.Repeat([]string{key}, n)); err != nil {
		t.Fatal(err)
	}
}

// hotkeygenTop runs `hotkeygen top` at now and returns its exit status and
// output.
func hotkeygenTop(t *testing.T, now time.Time, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := top(context.Background(), args, &stdout, &stderr, func() time.Time { return now })
	return code, stdout.String(), stderr.String()
}

// tableRows splits a printed table into its rows, each a list of cells.
func tableRows(out string) [][]string {
	var rows [][]string
	for line := range strings.Lines(out) {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// Two replicas of "user" and one of "order" read for a window; top shows
// what they reported, summed over the replicas, on one server and on a
// cluster.
func TestTopShowsTheClusterWideHotKeys(t *testing.T) {
	for _, topology := range []string{"server", "cluster"} {
		t.Run(topology, func(t *testing.T) {
			var rdb redis.UniversalClient
			var addr string
			if topology == "server" {
				srv := redistest.Start(t)
				rdb, addr = srv.Client(t), srv.Addr
			} else {
				cl := redistest.StartCluster(t, 3)
				rdb, addr = cl.Client(t), strings.Join(cl.Addrs, ",")
			}
			start := time.Now().Truncate(time.Second)
			u1, u2, o := newReplica(t, rdb, "user", start), newReplica(t, rdb, "user", start), newReplica(t, rdb, "order", start)
			for range 10 { // a slot is a tenth of the default 10s window
				u1.read(t, "user:1", 30)
				u2.read(t, "user:1", 30)
				u2.read(t, "user:2", 10)
				o.read(t, "order:7", 5)
				for _, r := range []*replica{u1, u2, o} {
					r.clock.step(time.Second)
				}
			}
			now := u1.clock.Now()

			// The last window all replicas reported ends two slots back:
			// nine slots of reads, over 10s.
			code, out, errOut := hotkeygenTop(t, now, "-redis", addr, "-once")
			want := [][]string{
				{"ENTITY", "KEY", "QPS", "SHARE"},
				{"user", "user:1", "54.0", "85.7%"},
				{"user", "user:2", "9.0", "14.3%"},
				{"order", "order:7", "4.5", "100.0%"},
			}
			if got := tableRows(out); code != 0 || !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("top -once = %d\n%s%s\nwant rows %q", code, out, errOut, want)
			}

			code, out, _ = hotkeygenTop(t, now, "-redis", addr, "-once", "-entity", "order")
			if got := tableRows(out); code != 0 || !slices.EqualFunc(got, [][]string{want[0], want[3]}, slices.Equal) {
				t.Errorf("top -once -entity order = %d\n%s", code, out)
			}
			code, out, _ = hotkeygenTop(t, now, "-redis", addr, "-once", "-n", "1")
			if got := tableRows(out); code != 0 || !slices.EqualFunc(got, want[:2], slices.Equal) {
				t.Errorf("top -once -n 1 = %d\n%s", code, out)
			}
			code, out, _ = hotkeygenTop(t, now.Add(time.Hour), "-redis", addr, "-once")
			if code != 0 || !strings.Contains(out, "no reads reported in the last 10s window") {
				t.Errorf("top -once an hour later = %d\n%s", code, out)
			}
		})
	}
}

func TestTopRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-every", "0s"}, {"-window", "1ms"}, {"extra"}} {
		if code, _, errOut := hotkeygenTop(t, time.Now(), args...); code != 2 || !strings.Contains(errOut, "hotkeygen top") {
			t.Errorf("top %q = %d, %q; want 2 and usage", args, code, errOut)
		}
	}
	if code, _, errOut := hotkeygenTop(t, time.Now(), "-redis", "127.0.0.1:1", "-once"); code != 1 || !strings.Contains(errOut, "hotkeygen top:") {
		t.Errorf("top against no server = %d, %q; want 1 and the error", code, errOut)
	}
}

// Without -once, top redraws the table until its context ends.
func TestTopRedrawsUntilCancelled(t *testing.T) {
	srv := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout syncWriter
	done := make(chan int)
	go func() { done <- top(ctx, []string{"-redis", srv.Addr, "-every", "10ms"}, &stdout, &stdout, time.Now) }()
	for strings.Count(stdout.String(), "\x1b[H\x1b[2J") < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("top exited %d after Ctrl-C:\n%s", code, stdout.String())
	}
	if !strings.Contains(stdout.String(), "hotkeygen top  "+srv.Addr) {
		t.Errorf("no title line:\n%q", stdout.String())
	}
}

// syncWriter is a bytes.Buffer safe for top and the test to share.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
