package track

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/redis/go-redis/v9"
)

// pubsubSession is a subscription to the entities' channels, on which the
// repositories announce their own writes.
type pubsubSession struct {
	ps *redis.PubSub
	// subs counts subscription confirmations, want those of the first
	// SUBSCRIBE: go-redis resubscribes silently after a reconnect.
	subs, want int
	keep       keepingUp
}

func pubsubListener(rdb redis.UniversalClient, channels []string) func(context.Context) (session, error) {
	return func(ctx context.Context) (session, error) {
		s := &pubsubSession{ps: rdb.Subscribe(ctx, channels...), want: len(channels)}
		context.AfterFunc(ctx, func() { s.ps.Close() })
		if _, err := s.ps.Receive(ctx); err != nil {
			s.close()
			return nil, fmt.Errorf("subscribe to %s: %w", channels, err)
		}
		s.subs = 1
		return s, nil
	}
}

func (s *pubsubSession) next(ctx context.Context) ([]string, bool, error) {
	if err := s.keep.ping(ctx, s.ps); err != nil {
		return nil, false, err
	}
	d := s.keep.window()
	asked := s.keep.asked(d)
	msg, err := s.ps.ReceiveTimeout(ctx, d)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		s.keep.quiet(asked)
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	switch m := msg.(type) {
	case *redis.Pong:
		s.keep.pong(m.Payload)
	case *redis.Subscription:
		if s.subs++; s.subs > s.want {
			return nil, false, errors.New("the subscriber reconnected")
		}
	case *redis.Message:
		return []string{m.Payload}, false, nil
	}
	return nil, false, nil
}

func (s *pubsubSession) close() { s.ps.Close() }

// arm keeps only the voucher: the caller's client redials a lost
// subscription, and next reports the loss when that dial returns.
func (s *pubsubSession) arm(_ func(), v voucher) { s.keep.v = &v }
