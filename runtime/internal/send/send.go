// Package send sends the commands of one read to Redis and waits for their
// replies, for as long as the reader's context allows: through the
// client's connection pool (Pool), or on the pool's one lane when it is
// free and batched with every other caller's reads on the client's
// automatic pipeline when it is not (Auto). The layout says which
// commands a read takes (runtime/internal/layout); a Sender says how
// they travel. Neither needs the key or value type.
//
// Why batching: on a loaded machine, a read through the pool costs a
// write and a read system call on a connection of its own and a wakeup
// of its goroutine, and its tail comes from those wakeups, most where
// Redis shares the cores (BENCHMARKS.md, "Against the peers").
// On the pipeline, one goroutine writes every read queued meanwhile in
// one write, and reads their replies in order.
package send

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Sender sends cmds, the commands of one read, and returns once each has
// its reply, a command's error included, or once ctx has ended: then
// either with ctx's error, and no command's reply may be read (it may
// still come, and is dropped), or with nil and ctx's error as the
// commands'.
type Sender interface {
	Send(ctx context.Context, cmds ...redis.Cmder) error
}

// A Way is how the reads of one key travel on a single server's client.
type Way int

const (
	// Lane sends a read of one command on the pool's lane when it is
	// free, on the automatic pipeline when it is not (Auto).
	Lane Way = iota
	// Piped sends every read of one command on the automatic pipeline:
	// the reference the lane is measured against (the load table's
	// "hotkeygen (pipeline)"), not a choice users are offered.
	Piped
	// Pooled sends every read through the pool.
	Pooled
)

// For returns the sender of the reads of one key on rdb, the way way
// says when rdb is a single server's client (a Sentinel's included). A
// Redis Cluster's reads go through the pool, node by node, as its client
// routes them.
func For(rdb redis.UniversalClient, way Way) (Sender, error) {
	c, ok := rdb.(*redis.Client)
	if !ok || way == Pooled {
		return Pool{rdb}, nil
	}
	ap, err := c.AsyncAutoPipeline()
	if err != nil {
		return nil, err
	}
	a := NewAuto(ap, Pool{rdb})
	if way == Piped {
		a.lane = nil
	}
	return a, nil
}
