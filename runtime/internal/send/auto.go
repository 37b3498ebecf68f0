package send

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Auto sends a read of one command on the pool's lane when it is free,
// and on its client's automatic pipeline (the deferred face of go-redis's
// AutoPipeliner, which the client owns and closes) when it is not.
//
// The lane is one read on a connection of the pool at a time: a read
// takes it when no other read of Auto's is on the pool, whatever waits on
// the pipeline, and gives it back when Send returns. The reads that find
// it taken join the batch gathered while the one before is in flight, and
// go out with it, in order, in one write. Deciding costs one
// compare-and-swap: no lock, no count of idle connections.
//
// Why one lane (measured in BENCHMARKS.md, "The median"): a read that
// waits on the pipeline waits for the batch in flight before its own goes
// out, so with the pipeline alone the median cold read is slower than a
// plain client's; the lane gives a read alone the pool's round trip and
// keeps the pipeline's tail for the rest. A second lane brings back the
// pool's tail: a second read in flight on a connection of its own brings
// back the wakeups the pipeline saves. Taking any idle connection of the
// pool, as first proposed, is the pool: its readers nearly always find
// one.
//
// A read of two commands (a hot key's GET and PTTL) takes the pool, lane
// or not: the pipeline could flush the first alone and send the second
// only once the first is answered, two round trips for one read, which
// costs most where every write to a hot key sends its readers such a read
// (the load table's (b)).
//
// The pipeline runs a command on a context of its own, not the reader's,
// so Send waits for the reply only as long as ctx lasts: a read given up
// when its node's breaker opens returns at once, as through the pool, and
// the reply, when it comes, is dropped.
type Auto struct {
	Pipe *redis.AutoPipeliner
	Pool Pool
	// lane is held by the read on the pool; nil when every read of one
	// command takes the pipeline (the reference the lane is measured
	// against, see For).
	lane *atomic.Bool
}

// NewAuto returns the sender of reads on pool's lane or on pipe (see
// Auto).
func NewAuto(pipe *redis.AutoPipeliner, pool Pool) Auto {
	return Auto{Pipe: pipe, Pool: pool, lane: new(atomic.Bool)}
}

// Send sends cmds and waits for their replies, or for ctx's end.
func (a Auto) Send(ctx context.Context, cmds ...redis.Cmder) error {
	if len(cmds) > 1 {
		return a.Pool.Send(ctx, cmds...)
	}
	if a.lane != nil && a.lane.CompareAndSwap(false, true) {
		defer a.lane.Store(false)
		return a.Pool.Send(ctx, cmds...)
	}
	if a.Pipe.Submit(ctx, cmds[0]).WaitContext(ctx) != nil && ctx.Err() != nil {
		return ctx.Err() // given up: the reply may still come
	}
	return nil
}
