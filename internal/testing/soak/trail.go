package soak

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
)

// event is a line an instance's runtime logged, Info and above: its
// breaker opening and closing, its session lost and back, a key promoted
// or demoted. The trail of a stale read shows them beside the operations.
type event struct {
	at   time.Duration
	inst int // -1: a repository the run made without an instance's logger
	msg  string
}

// maxEvents caps what a run keeps of its runtimes' logs: a run that
// floods them (a breaker flapping for minutes) keeps the first.
const maxEvents = 100_000

// logged is an instance's log handler: it keeps the lines above, and
// notes when a breaker opened (Result.Openings).
type logged struct {
	r    *run
	inst int
}

func (logged) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h logged) WithAttrs([]slog.Attr) slog.Handler         { return h }
func (h logged) WithGroup(string) slog.Handler              { return h }

func (h logged) Handle(_ context.Context, rec slog.Record) error {
	if strings.HasPrefix(rec.Message, "hotkey: stats") {
		return nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(rec.Message, "hotkey: "))
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.now()
	if strings.HasPrefix(rec.Message, "hotkey: Redis unreachable") {
		r.openings = append(r.openings, at)
	}
	if len(r.events) < maxEvents {
		r.events = append(r.events, event{at: at, inst: h.inst, msg: b.String()})
	}
	return nil
}

// trail is what happened around a read stale beyond the bound, for the
// failure that reports it: every write of its key from shortly before
// the newer write to just after the read, the reading instance's reads
// of the key (runs of one version folded into a line), the run's outages
// and resets, and what that instance's runtime logged meanwhile. A red
// under load is explained from this, not from a run again on an idle
// machine, which seldom reproduces it.
func trail(ops []history.Op, s history.Stale, run history.Run, events []event) string {
	from, to := s.Newer.Start-300*time.Millisecond, s.Read.End+100*time.Millisecond
	type line struct {
		at   time.Duration
		text string
	}
	var lines []line
	add := func(at time.Duration, format string, args ...any) {
		lines = append(lines, line{at, fmt.Sprintf(format, args...)})
	}
	var run0 *history.Op // the reads of one version folded so far
	var runN int
	var runEnd time.Duration
	flush := func() {
		if run0 != nil {
			add(run0.Start, "instance %d read version %d, %d reads to %v", run0.Instance, run0.Version, runN, runEnd)
			run0 = nil
		}
	}
	for i := range ops {
		op := &ops[i]
		if op.Key != s.Read.Key || op.End < from || op.Start > to {
			continue
		}
		switch {
		case op.Kind == history.Write:
			flush() // a run of reads ends at a write of its key
			what := "wrote"
			if op.Failed {
				what = "failed to write"
			}
			add(op.Start, "writer %d %s version %d, acknowledged at %v", op.Instance, what, op.Version, op.End)
		case op.Instance != s.Read.Instance:
		case op.Failed:
			flush()
			add(op.Start, "instance %d read failed (ended %v)", op.Instance, op.End)
		case run0 != nil && run0.Version == op.Version:
			runN, runEnd = runN+1, op.End
		default:
			flush()
			run0, runN, runEnd = op, 1, op.End
		}
	}
	flush()
	for _, w := range run.Outages {
		switch {
		case w.To < from || w.From > to:
		case w.Hung:
			add(w.From, "Redis hung, no fault injected: the probe's PING unanswered to %v", w.To)
		default:
			add(w.From, "outage to %v (answered %v, partition %v of instance %d, lost %v)", w.To, w.Answered, w.Partition, w.Instance, w.Lost)
		}
	}
	for _, rs := range run.Resets {
		if rs.At >= from && rs.At <= to {
			add(rs.At, "reset (done %v)", rs.Done)
		}
	}
	for _, e := range events {
		if e.at >= from-time.Second && e.at <= to && (e.inst == s.Read.Instance || e.inst < 0) {
			add(e.at, "instance %d logged: %s", e.inst, e.msg)
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int { return cmp.Compare(a.at, b.at) })
	var b strings.Builder
	fmt.Fprintf(&b, "trail of %s:\n", s)
	for _, l := range lines {
		fmt.Fprintf(&b, "  %10.4fs %s\n", l.at.Seconds(), l.text)
	}
	return b.String()
}
