package background

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
)

// Job is one kind of background work that waits on Redis: the
// aggregation report, the cluster read, the refresh. Each run has a
// goroutine of its own, so that the tick, which samples History and runs
// detection, never waits on Redis: a node that accepts connections and
// never answers would stop both, and the live page would show no errors
// at the height of an outage. A job runs once at a time: a tick that
// finds its last run still waiting skips it.
type Job struct {
	running sync.Mutex   // held by the run under way
	skipped atomic.Int64 // runs skipped while the one under way waits
}

// Start runs f, the job j called name, on a goroutine of g, which Close
// waits for, unless j's last run is still under way; it reports whether
// f started. Only the first run skipped while one waits is logged to log,
// and when that one ends, how many were skipped, unless ctx (the Cache's,
// ended by Close) ended meanwhile.
func (j *Job) Start(ctx context.Context, g *group.Group, log *slog.Logger, name string, f func()) bool {
	if !j.running.TryLock() {
		if j.skipped.Add(1) == 1 {
			log.Warn("hotkey: background work still waits on Redis; its next runs are skipped until it ends", "job", name)
		}
		return false
	}
	started := g.Go(func() {
		defer j.running.Unlock()
		f()
		if n := j.skipped.Swap(0); n > 0 && ctx.Err() == nil {
			log.Info("hotkey: background work ended", "job", name, "skipped_runs", n)
		}
	})
	if !started {
		j.running.Unlock()
	}
	return started
}

// Wait returns once the run under way, if any, has ended.
func (j *Job) Wait() {
	j.running.Lock()
	j.running.Unlock() // the run under way, if any, has ended
}
