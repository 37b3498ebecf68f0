package send

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Auto sends a read of one command, when other reads are in flight, on
// its client's automatic pipeline (the deferred face of go-redis's
// AutoPipeliner, which the client owns and closes): it joins the batch
// gathered while the one before is in flight, and goes out with it, in
// order, in one write. The pipeline runs a command on a context of its
// own, not the reader's, so Send waits for the reply only as long as ctx
// lasts: a read given up when its node's breaker opens returns at once,
// as through the pool, and the reply, when it comes, is dropped.
//
// Two reads go through Pool instead. A read alone, with no other in
// Send, would pay for the pipeline's batching besides the handoff to
// another goroutine, which the pool's read pays too (Apart): a single
// goroutine's cold read took 1.80–1.83× its GET on the pipeline at
// bfa62e6, 1.50–1.55× alone on the pool (BenchmarkGetColdPaired).
// And a read of two
// commands (a hot key's GET and PTTL): the pipeline could flush the first
// alone and send the second only once the first is answered, two round
// trips for one read; on the load table's (b), where every write to a hot
// key sends its readers such a read, that cost 53k reads/s and a p99 of
// 1.3 ms, against 67k and 419 µs with the pair on the pool.
type Auto struct {
	Pipe *redis.AutoPipeliner
	Pool Pool
	// busy counts the reads in Send.
	busy *atomic.Int64
}

// NewAuto returns the sender of reads on pipe, or on pool (see Auto).
func NewAuto(pipe *redis.AutoPipeliner, pool Pool) Auto {
	return Auto{Pipe: pipe, Pool: pool, busy: new(atomic.Int64)}
}

// Send sends cmds and waits for their replies, or for ctx's end.
func (a Auto) Send(ctx context.Context, cmds ...redis.Cmder) error {
	alone := a.busy.Add(1) == 1
	defer a.busy.Add(-1)
	if alone || len(cmds) > 1 {
		return a.Pool.Send(ctx, cmds...)
	}
	if a.Pipe.Submit(ctx, cmds[0]).WaitContext(ctx) != nil && ctx.Err() != nil {
		return ctx.Err() // given up: the reply may still come
	}
	return nil
}
