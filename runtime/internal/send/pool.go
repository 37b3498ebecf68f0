package send

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Pool sends a read through its client's connection pool: one command
// alone, several in a pipeline, one round trip either way.
type Pool struct {
	Client redis.UniversalClient
}

// Send sends cmds and waits for their replies, or for ctx's end (see
// Apart).
func (p Pool) Send(ctx context.Context, cmds ...redis.Cmder) error {
	return Apart(ctx, func() { p.send(ctx, cmds...) })
}

// send sends cmds and returns with their replies.
func (p Pool) send(ctx context.Context, cmds ...redis.Cmder) {
	if len(cmds) == 1 {
		_ = p.Client.Process(ctx, cmds[0]) // the reply, error included, is the command's
		return
	}
	pipe := p.Client.Pipeline()
	for _, cmd := range cmds {
		_ = pipe.Process(ctx, cmd) // queued: a pipeline's Process sends nothing
	}
	_, _ = pipe.Exec(ctx) // each reply is its command's
}

// Apart runs send, which sends commands through the pool and returns with
// their replies, and waits for it until ctx ends: it returns nil once
// send has returned, or ctx's error, and then no command's reply may be
// read (it may still come). go-redis does not interrupt a read on a pooled
// connection when its context ends: it waits for the reply until the
// client's ReadTimeout (3 s by default), so a caller whose node hangs would
// wait that long, deadline or not, breaker open or not. Given up, the
// commands keep their connection until the reply or the timeout, on a
// goroutine of their own, out of the caller's way. A context that never
// ends costs no goroutine.
func Apart(ctx context.Context, send func()) error {
	if ctx.Done() == nil {
		send()
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		send()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		select {
		case <-done: // the replies came as it ended: take them
			return nil
		default:
			return ctx.Err()
		}
	}
}
