package track

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"
)

// followEvery paces following's check that a Sentinel failover client
// still reaches the server its session tracks. Its master moves under a
// live pool: on the Sentinel's +switch-master the client writes to the
// new master at once, while the session, still on the old one, hears of
// those writes only once the old master is the new one's replica and has
// caught up, which took 50 ms and more on a loaded machine. Checked as
// often as the session vouches, the session stops vouching within the
// bound of the caller's client moving. Only a failover client is
// checked: a plain client's server does not move under it, and a check
// would cost every instance's node an INFO it must parse, for nothing.
const followEvery = VouchEvery

// errMoved ends a session whose client's commands reach another server.
var errMoved = errors.New("the client's commands reach another server now (a failover?)")

// following checks, every followEvery, that the caller's commands still
// reach the server the session tracks, and ends the session when they do
// not. Quiet or not: a session on a demoted master, now a replica, goes on
// hearing every write through replication, and would never notice that
// it no longer tracks the master until that master fails, while the
// caller's commands spend seconds on it. It runs beside the session, not
// in its loop: the check waits on the caller's client, whose connections
// are all taken when Redis comes back from a pause with every reader's
// command queued, and an invalidation held up behind it for 77 ms once
// let copies be served beyond the bound.
type following struct {
	runID string // the server the session tracks, read on its connection; "" skips the check
	moved atomic.Bool
	halt  context.CancelFunc
	done  chan struct{}
}

// start checks rdb, when it is a Sentinel failover client, until ctx
// ends or stop; lost is called once rdb reaches another server.
func (f *following) start(ctx context.Context, rdb *redis.Client, lost func()) {
	if !isFailover(rdb) || f.runID == "" {
		return
	}
	ctx, f.halt = context.WithCancel(ctx)
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		t := time.NewTicker(followEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			cctx, cancel := context.WithTimeout(ctx, breaker.AnswerWithin)
			id, err := serverID(cctx, rdb)
			cancel()
			if err == nil && id != f.runID {
				f.moved.Store(true)
				lost()
				return
			}
		}
	}()
}

// stop ends the checks and waits for them.
func (f *following) stop() {
	if f.halt != nil {
		f.halt()
		<-f.done
	}
}

// isFailover reports whether rdb is go-redis's NewFailoverClient.
func isFailover(rdb *redis.Client) bool {
	return rdb != nil && rdb.Options().Addr == "FailoverClient"
}

// serverID returns the run_id of the server rdb's commands reach.
func serverID(ctx context.Context, rdb *redis.Client) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("INFO server: %w", err)
	}
	if id, ok := runID(info); ok {
		return id, nil
	}
	return "", errors.New("INFO server: no run_id")
}

// runID finds the run_id in an INFO server answer.
func runID(info string) (string, bool) {
	for line := range strings.Lines(info) {
		if id, ok := strings.CutPrefix(line, "run_id:"); ok {
			return strings.TrimSpace(id), true
		}
	}
	return "", false
}
