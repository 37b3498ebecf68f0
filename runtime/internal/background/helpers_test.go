package background

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// epoch is the start of every test's clock.
var epoch = time.Unix(1_700_000_000, 0)

// logs keeps the lines logged to it, as messages followed by their
// attributes: a slog.Handler, safe for concurrent use.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logs) WithGroup(string) slog.Handler            { return l }

func (l *logs) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}

// logger returns a logger writing to l.
func (l *logs) logger() *slog.Logger { return slog.New(l) }

// with returns the lines that contain s.
func (l *logs) with(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// ticker is a Ticker whose ticks the test sends.
type ticker struct {
	c       chan time.Time
	period  time.Duration
	stopped bool
}

func (t *ticker) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t.period = d
	return t.c, func() { t.stopped = true }
}
