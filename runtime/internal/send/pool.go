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

// Send sends cmds and waits for their replies, or for ctx's end, which
// is then each command's error: the pool never leaves a reply to come.
func (p Pool) Send(ctx context.Context, cmds ...redis.Cmder) error {
	if len(cmds) == 1 {
		_ = p.Client.Process(ctx, cmds[0]) // the reply, error included, is the command's
		return nil
	}
	pipe := p.Client.Pipeline()
	for _, cmd := range cmds {
		_ = pipe.Process(ctx, cmd) // queued: a pipeline's Process sends nothing
	}
	_, _ = pipe.Exec(ctx) // each reply is its command's
	return nil
}
