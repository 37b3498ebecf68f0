package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/aggregate"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// stepClock is a manual clock (a Config.Clock) whose ticker the test drives: the
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

func newReplica(t *testing.T, rdb redis.UniversalClient, entity string, start time.Time, opts ...runtime.Option) *replica {
	t.Helper()
	clk := newStepClock(start)
	glue := runtime.Glue[string, item]{Key: func(k string) string { return k }, Clone: func(v *item) *item { c := *v; return &c }}
	c, err := runtime.New(rdb, glue, append([]runtime.Option{runtime.WithEntity(entity), func(c *runtime.Config) { c.Clock = clk }, runtime.WithAggregate(true),
		runtime.WithInvalidate(runtime.InvalidateOff)}, opts...)...)
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
			want := [][]string{
				{"ENTITY", "KEY", "QPS", "SHARE"},
				{`"user"`, `"user:1"`, "54.0", "85.7%"},
				{`"user"`, `"user:2"`, "9.0", "14.3%"},
				{`"order"`, `"order:7"`, "4.5", "100.0%"},
			}
			topShows(t, now, want, "-redis", addr, "-once")

			code, out, _ := hotkeygenTop(t, now, "-redis", addr, "-once", "-entity", "order")
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

// A key read by half of all reads shows 50%, though each replica names
// only its busiest keys: shares are of every read the replicas counted.
func TestTopSharesAreOfAllReads(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	start := time.Now().Truncate(time.Second)
	a := newReplica(t, rdb, "user", start, runtime.WithAggregateTop(3))
	b := newReplica(t, rdb, "user", start, runtime.WithAggregateTop(3))
	for slot := range 10 {
		for _, r := range []*replica{a, b} {
			r.read(t, "user:1", 30)
			for i := range 30 { // 30 other keys once each: 2 of them are reported
				r.read(t, "user:"+strconv.Itoa(100+slot*30+i), 1)
			}
		}
		a.clock.step(time.Second)
		b.clock.step(time.Second)
	}
	want := [][]string{{"ENTITY", "KEY", "QPS", "SHARE"}, {`"user"`, `"user:1"`, "54.0", "50.0%"}}
	topShows(t, a.clock.Now(), want, "-redis", srv.Addr, "-once", "-n", "1")
}

// topShows runs hotkeygen top with args at now until its table's rows are
// want. Each replica reports a slot on a goroutine of its own after the
// tick that ends it, so the last reports may land after the test's last
// step; a slot lost would never match.
func topShows(t *testing.T, now time.Time, want [][]string, args ...string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		code, out, errOut := hotkeygenTop(t, now, args...)
		if got := tableRows(out); code == 0 && slices.EqualFunc(got, want, slices.Equal) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("top %q = %d\n%s%s\nwant rows %q", args, code, out, errOut, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTopRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-n", "1001"}, {"-every", "0s"}, {"-window", "1ms"}, {"extra"}} {
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

// topNow is a time whose last fully reported window, at the default 10s
// window, is slots topFirst..topFirst+9.
var topNow = time.Unix(1_800_000_000, 0)

var topFirst, _ = aggregate.Span(topNow, runtime.DefaultWindow)

// zadd puts members with their scores into entity's set for the window's
// slot i, as a hostile writer could, in one pipeline.
func zadd(t testing.TB, rdb redis.Cmdable, entity string, i int64, zs ...redis.Z) {
	t.Helper()
	if err := rdb.ZAdd(context.Background(), aggregate.Key(entity, topFirst+i), zs...).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestDisplayQuotesAndCuts(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a plain key is quoted", "user:1", `"user:1"`},
		{"an escape sequence is inert", "\x1b[2J\x1b]0;pwned\a", `"\x1b[2J\x1b]0;pwned\a"`},
		{"line breaks and tabs stay on the line", "a\r\nb\tc", `"a\r\nb\tc"`},
		{"invalid UTF-8 shows as bytes", "k\xff\xfe", `"k\xff\xfe"`},
		{"printable Unicode is kept", "user:é", `"user:é"`},
		{"a right-to-left override is escaped", "user:\u202e1", `"user:\u202e1"`},
		{"exactly the width is whole", strings.Repeat("a", displayWidth), `"` + strings.Repeat("a", displayWidth) + `"`},
		{"one past the width is cut", strings.Repeat("a", displayWidth+1), `"` + strings.Repeat("a", displayWidth) + `…" (49 bytes)`},
		{"a 1 MiB key is cut", strings.Repeat("x", 1<<20), `"` + strings.Repeat("x", displayWidth) + `…" (1048576 bytes)`},
		{"a cut never splits an escape", strings.Repeat("a", displayWidth-2) + "\x1b", `"` + strings.Repeat("a", displayWidth-2) + `…" (47 bytes)`},
	}
	for _, tt := range tests {
		if got := display(tt.in); got != tt.want {
			t.Errorf("%s: display(%q) = %s, want %s", tt.name, tt.in, got, tt.want)
		}
	}
}

// Members a hostile writer put in a set come out quoted, one row a line,
// with nothing a terminal would act on.
func TestTopShowsHostileMembersQuoted(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	tests := []struct {
		name, member, want string
	}{
		{"an escape sequence that clears the screen", "\x1b[H\x1b[2Juser:1", `"\x1b[H\x1b[2Juser:1"`},
		{"a line break", "user:2\r\nuser:3", `"user:2\r\nuser:3"`},
		{"a tab that would shift columns", "user:4\t999\t100%", `"user:4\t999\t100%"`},
		{"a forged row", "entity key 999 100%", `"entity key 999 100%"`},
		{"invalid UTF-8", "user:\xff\xc0", `"user:\xff\xc0"`},
		{"a 1 MiB member", strings.Repeat("m", 1<<20), `"` + strings.Repeat("m", displayWidth) + `…" (1048576 bytes)`},
	}
	for _, entity := range []string{"user", "evil\x1b[31m\nentity"} {
		for i, tt := range tests {
			zadd(t, rdb, entity, 0, redis.Z{Score: float64(100 - i), Member: tt.member})
		}
	}
	code, out, errOut := hotkeygenTop(t, topNow, "-redis", srv.Addr, "-once")
	if code != 0 {
		t.Fatalf("top = %d: %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\r\t") || !utf8.ValidString(out) {
		t.Errorf("output holds a control byte or invalid UTF-8:\n%q", out)
	}
	if lines := strings.Count(out, "\n"); lines != 1+2*len(tests) {
		t.Errorf("%d lines, want a header and %d rows:\n%s", lines, 2*len(tests), out)
	}
	for _, tt := range tests {
		for _, entity := range []string{`"user"`, `"evil\x1b[31m\nentity"`} {
			if !strings.Contains(out, entity+"  ") || !strings.Contains(out, tt.want+"  ") {
				t.Errorf("%s: no row of %s %s in\n%s", tt.name, entity, tt.want, out)
			}
		}
	}
}

func TestCountableIsWhatARepositoryWrites(t *testing.T) {
	tests := []struct {
		score float64
		want  bool
	}{
		{0, true}, {1, true}, {maxCount, true},
		{math.Nextafter(maxCount, math.Inf(1)), false},
		{-1, false}, {math.Inf(1), false}, {math.Inf(-1), false}, {math.NaN(), false}, {1e308, false},
	}
	for _, tt := range tests {
		if got := countable(tt.score); got != tt.want {
			t.Errorf("countable(%v) = %v, want %v", tt.score, got, tt.want)
		}
	}
}

// Scores no repository writes never reach a column: their members are
// skipped and counted under the table, and what is left is summed as
// usual. (Redis refuses NaN in a set, so NaN is covered by countable's
// test; +Inf and -Inf in two slots would sum to it.)
func TestTopSkipsScoresNoRepositoryWrites(t *testing.T) {
	tests := []struct {
		name    string
		sets    [][]redis.Z // slot i's members
		rows    [][]string
		skipped int
	}{
		{
			name: "+Inf is skipped, the rest shared as if it were not there",
			sets: [][]redis.Z{{{Score: math.Inf(1), Member: "inf"}, {Score: 30, Member: "a"}, {Score: 10, Member: "b"}}},
			rows: [][]string{{`"a"`, "3.0", "75.0%"}, {`"b"`, "1.0", "25.0%"}}, skipped: 1,
		},
		{
			name: "+Inf and -Inf of one member in two slots never make NaN",
			sets: [][]redis.Z{{{Score: math.Inf(1), Member: "k"}, {Score: 5, Member: "a"}}, {{Score: math.Inf(-1), Member: "k"}}},
			rows: [][]string{{`"a"`, "0.5", "100.0%"}}, skipped: 2,
		},
		{
			name: "negative scores are skipped",
			sets: [][]redis.Z{{{Score: -50, Member: "neg"}, {Score: 20, Member: "a"}}},
			rows: [][]string{{`"a"`, "2.0", "100.0%"}}, skipped: 1,
		},
		{
			name: "a score above 2^53 is skipped; one at it is summed without overflow",
			sets: [][]redis.Z{{{Score: 1e300, Member: "huge"}, {Score: maxCount, Member: "max"}}, {{Score: maxCount, Member: "max"}}},
			rows: [][]string{{`"max"`, "1801439850948198.5", "100.0%"}}, skipped: 1,
		},
		{
			name: "a total of 0 shows no share",
			sets: [][]redis.Z{{{Score: 0, Member: "zero"}}},
			rows: [][]string{{`"zero"`, "0.0", "-"}},
		},
		{
			name:    "nothing countable: no rows, the skip said",
			sets:    [][]redis.Z{{{Score: math.Inf(1), Member: "inf"}}},
			skipped: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			for i, zs := range tt.sets {
				zadd(t, rdb, "e", int64(i), zs...)
			}
			code, out, errOut := hotkeygenTop(t, topNow, "-redis", srv.Addr, "-once")
			if code != 0 {
				t.Fatalf("top = %d: %s", code, errOut)
			}
			if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
				t.Errorf("a NaN or Inf reached the table:\n%s", out)
			}
			var rows [][]string
			for _, r := range tableRows(out) {
				if len(r) == 4 && r[0] == `"e"` {
					rows = append(rows, r[1:])
				}
			}
			if !slices.EqualFunc(rows, tt.rows, slices.Equal) {
				t.Errorf("rows %q, want %q\n%s", rows, tt.rows, out)
			}
			note := fmt.Sprintf("%d members skipped", tt.skipped)
			if strings.Contains(out, "members skipped") != (tt.skipped > 0) || tt.skipped > 0 && !strings.Contains(out, note) {
				t.Errorf("want %q (or none for 0) under the table:\n%s", note, out)
			}
		})
	}
}

// bigSets fills the window's ten sets of entity with members each, member
// j of slot i scored j+i (so "m99999" leads every set), in batches.
func bigSets(t testing.TB, rdb redis.Cmdable, entity string, members int) {
	t.Helper()
	ctx := context.Background()
	zs := make([]redis.Z, 0, 10_000)
	for i := range int64(aggregate.Slots) {
		for j := 0; j < members; j += cap(zs) {
			zs = zs[:0]
			for k := j; k < min(j+cap(zs), members); k++ {
				zs = append(zs, redis.Z{Score: float64(k) + float64(i), Member: "m" + strconv.Itoa(k)})
			}
			if err := rdb.ZAdd(ctx, aggregate.Key(entity, topFirst+i), zs...).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// membersHook counts the sorted-set members Redis returns to a client.
type membersHook struct{ n atomic.Int64 }

func (h *membersHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *membersHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count(cmd)
		return err
	}
}
func (h *membersHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			h.count(c)
		}
		return err
	}
}
func (h *membersHook) count(cmd redis.Cmder) {
	if z, ok := cmd.(*redis.ZSliceCmd); ok {
		h.n.Add(int64(len(z.Val())))
	}
}

// A draw over ten sets of 100,000 members reads the top readPerSet+1 of
// each, whatever their size, ranks the busiest keys right, and says the
// sets were cut.
func TestTopReadsABoundedNumberOfMembers(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	bigSets(t, rdb, "big", 100_000)

	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	var hook membersHook
	client.AddHook(&hook)
	v := &topView{rdb: client, entity: "big", window: runtime.DefaultWindow, n: 3}
	tab, err := v.collect(context.Background(), topNow)
	if err != nil {
		t.Fatal(err)
	}
	if got, bound := hook.n.Load(), int64(aggregate.Slots*(readPerSet+1)); got != bound {
		t.Errorf("a draw read %d members, want %d: the top %d+1 of each of %d sets", got, bound, readPerSet, aggregate.Slots)
	}
	var keys []string
	for _, r := range tab.rows {
		keys = append(keys, r.key)
	}
	if want := []string{"m99999", "m99998", "m99997"}; !slices.Equal(keys, want) {
		t.Errorf("top keys %q, want %q", keys, want)
	}
	// m99999 scored 99,999+i in slot i: 1,000,035 reads over 10s.
	if got := tab.rows[0].qps; got != 100_003.5 {
		t.Errorf("m99999 at %v/s, want 100003.5", got)
	}
	// Left out of each set: at most the 1001st member's score, 98,999+i.
	if tab.cut != aggregate.Slots || tab.missed != 99_003.5 {
		t.Errorf("cut %d sets, missing up to %v/s; want 10 and 99003.5", tab.cut, tab.missed)
	}
	var out bytes.Buffer
	v.print(&out, tab)
	if !strings.Contains(out.String(), "10 sets hold more than 1000 members; only the top 1000 of each were read: counts may be low by up to 99003.5/s") {
		t.Errorf("no note of the cut:\n%s", out.String())
	}
}

// BenchmarkTopDraw is one draw over ten sets of 100,000 members: "bounded"
// is top's draw, "whole" reads every member as top did before, through
// aggregate.Read without a limit, and sums them.
func BenchmarkTopDraw(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	bigSets(b, rdb, "big", 100_000)
	ctx := context.Background()
	b.Run("bounded", func(b *testing.B) {
		b.ReportAllocs()
		v := &topView{rdb: rdb, entity: "big", window: runtime.DefaultWindow, n: 20}
		for b.Loop() {
			if _, err := v.collect(ctx, topNow); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		first, last := aggregate.Span(topNow, runtime.DefaultWindow)
		for b.Loop() {
			sums, err := aggregate.Read(ctx, rdb, "big", first, last, 0)
			if err != nil || len(sums) != 100_000+aggregate.Slots-1 && len(sums) != 100_000 {
				b.Fatal(err, len(sums))
			}
		}
	})
}
