package soak

import (
	"context"
	"runtime"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/history"
)

// Fault is one thing that goes wrong with Redis, as it does in production.
type Fault struct {
	Name   string
	inject func(ctx context.Context, r *run, l *history.Log) error
}

// outageFor is how long a killed server stays down; stallFor how long
// DEBUG SLEEP and CLIENT PAUSE keep it from answering.
const (
	outageFor = time.Second
	stallFor  = 500 * time.Millisecond
)

// Faults are every fault a run can inject, in the order a run injects
// them.
var Faults = []Fault{
	{"CLIENT KILL all", func(ctx context.Context, r *run, _ *history.Log) error {
		if err := r.admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
			return err
		}
		return r.admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err()
	}},
	{"CLIENT KILL normal", func(ctx context.Context, r *run, _ *history.Log) error {
		return r.admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err()
	}},
	{"CLIENT KILL pubsub", func(ctx context.Context, r *run, _ *history.Log) error {
		return r.admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err()
	}},
	{"SIGKILL and restart", func(ctx context.Context, r *run, l *history.Log) error {
		from := r.now() // every write acknowledged before is lost
		r.srv.Kill()
		sleep(ctx, outageFor)
		err := r.srv.Relaunch() // on the same port, empty
		r.mu.Lock()
		r.outages = append(r.outages, history.Window{From: from, To: r.now()})
		r.resets = append(r.resets, from)
		r.mu.Unlock()
		if err != nil {
			return err
		}
		return r.seed(ctx, l)
	}},
	// The outage comes before the last faults, so the run sees Redis
	// come back and the service recover.
	{"DEBUG SLEEP 0.5", func(ctx context.Context, r *run, _ *history.Log) error {
		return r.admin.Do(ctx, "DEBUG", "SLEEP", stallFor.Seconds()).Err()
	}},
	{"CLIENT PAUSE 500", func(ctx context.Context, r *run, _ *history.Log) error {
		return r.admin.Do(ctx, "CLIENT", "PAUSE", stallFor.Milliseconds(), "ALL").Err()
	}},
	{"FLUSHALL", func(ctx context.Context, r *run, l *history.Log) error {
		r.mu.Lock()
		r.resets = append(r.resets, r.now()) // before it is sent: any read after may see it
		r.mu.Unlock()
		if err := r.admin.FlushAll(ctx).Err(); err != nil {
			return err
		}
		return r.seed(ctx, l)
	}},
}

func goMaxProcs() int { return runtime.GOMAXPROCS(0) }
