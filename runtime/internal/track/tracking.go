package track

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"
)

// trackingSession is one RESP2 connection that turned on CLIENT TRACKING
// in BCAST mode for the prefixes, redirected to itself, and subscribed to
// __redis__:invalidate. With tracking and invalidations on one connection,
// losing either is losing the connection, which the session sees at once.
type trackingSession struct {
	sub *redis.Client
	ps  *redis.PubSub
	// dials counts the connections the client made, and first the count
	// when the session started: go-redis reconnects a subscription by
	// itself, and a new connection is a new session.
	dials, first atomic.Int32
	// end ends the session's coverage, when its connection is seen to go;
	// nil until the listener arms it.
	end  atomic.Pointer[func()]
	keep keepingUp
	// sock records the connection sub dials: a PING unanswered counts
	// only once it is read dry (keepingUp.quiet).
	sock breaker.Socket
}

// trackingListener connects sessions to the cluster node base reaches,
// for the keys under prefixes (none of which starts another; "" is every
// key). A cluster's sessions broadcast: a slot's new owner, or a promoted
// replica, must be heard before the hub reads the topology again, which
// a session tracking only the keys it read on the old owner would not.
func trackingListener(base *redis.Options, prefixes []string) func(context.Context) (session, error) {
	return func(ctx context.Context) (session, error) {
		s := &trackingSession{}
		opts := *base
		opts.Protocol = 2 // invalidations arrive as plain Pub/Sub messages
		opts.PoolSize, opts.MinIdleConns, opts.MaxIdleConns = 1, 0, 1
		dial := opts.Dialer
		if dial == nil {
			dial = redis.NewDialer(&opts)
		}
		opts.Dialer = s.sock.Dialer(dial)
		s.keep.sock = &s.sock
		opts.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			s.dials.Add(1)
			id, err := cn.ClientID(ctx).Result()
			if err != nil {
				return fmt.Errorf("CLIENT ID: %w", refused(err))
			}
			args := []any{"CLIENT", "TRACKING", "on", "REDIRECT", id, "BCAST"}
			for _, p := range prefixes {
				if p != "" {
					args = append(args, "PREFIX", p)
				}
			}
			if err := cn.Do(ctx, args...).Err(); err != nil {
				return fmt.Errorf("CLIENT TRACKING: %w", refused(err))
			}
			return nil
		}
		s.sub = redis.NewClient(&opts)
		s.sub.AddHook(s)
		s.ps = s.sub.Subscribe(ctx, "__redis__:invalidate")
		// Closing the subscription interrupts a blocked receive; the rest
		// is closed by the goroutine that uses it.
		context.AfterFunc(ctx, func() { s.ps.Close() })
		if _, err := s.ps.Receive(ctx); err != nil { // the subscription's confirmation
			s.close()
			return nil, fmt.Errorf("subscribe to __redis__:invalidate: %w", err)
		}
		s.first.Store(s.dials.Load())
		return s, nil
	}
}

// DialHook ends the session the moment its client dials again: go-redis
// redials a lost subscription inside the receive call, and the runtime
// must not wait for that dial to learn the session is gone.
func (s *trackingSession) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if end := s.end.Load(); end != nil {
			(*end)()
		}
		return next(ctx, network, addr)
	}
}

func (s *trackingSession) arm(end func(), v voucher) {
	s.end.Store(&end)
	s.keep.v = &v
}

func (s *trackingSession) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (s *trackingSession) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (s *trackingSession) next(ctx context.Context) ([]string, bool, error) {
	if err := s.keep.ping(ctx, s.ps); err != nil {
		return nil, false, err
	}
	d := s.keep.window()
	asked := s.keep.asked(d)
	msg, err := s.ps.ReceiveTimeout(ctx, d)
	if s.dials.Load() != s.first.Load() {
		return nil, false, errors.New("the subscriber reconnected")
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		s.keep.quiet(asked)
		return nil, false, nil
	case err != nil && isFlush(err):
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	switch m := msg.(type) {
	case *redis.Message:
		if m.PayloadSlice != nil {
			return m.PayloadSlice, false, nil
		}
		return []string{m.Payload}, false, nil
	case *redis.Pong:
		s.keep.pong(m.Payload)
	}
	return nil, false, nil
}

func (s *trackingSession) close() {
	s.ps.Close()
	s.sub.Close()
}
