package track

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"
)

// followEvery paces watch's check that a Sentinel failover client still
// reaches the server its session tracks. Its master moves under a live
// pool: on the Sentinel's +switch-master the client writes to the new
// master at once, while the session, still on the old one, hears of those
// writes only once the old master is the new one's replica and has caught
// up, which took 50 ms and more on a loaded machine. Checked as often as
// the session vouches, the session stops vouching within the bound of the
// caller's client moving. Only a failover client is checked: a plain
// client's server does not move under it, and a check would cost every
// instance's node an INFO it must parse, ten a second, for nothing.
const followEvery = VouchEvery

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
	// follow is the caller's client when it is a Sentinel failover
	// client, and runID the server the session tracks, read on its
	// connection: when follow's commands reach another server (a Sentinel
	// promoted a replica), the session ends (see watch).
	follow *redis.Client
	runID  atomic.Pointer[string] // set before the subscription is confirmed, and by each redial
	// sock records the connection sub dials: a PING unanswered counts
	// only once it is read dry (keepingUp.quiet).
	sock breaker.Socket
	// moved is set when watch saw follow reach another server; stopWatch
	// and watched stop and wait for watch.
	moved     atomic.Bool
	stopWatch context.CancelFunc
	watched   chan struct{}
}

// trackingListener connects sessions to the server base reaches, for the
// keys under prefixes (none of which starts another; "" is every key).
func trackingListener(base *redis.Options, prefixes []string, follow *redis.Client) func(context.Context) (session, error) {
	return func(ctx context.Context) (session, error) {
		s := &trackingSession{}
		if follow != nil && follow.Options().Addr == "FailoverClient" { // go-redis's NewFailoverClient
			s.follow = follow
		}
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
			if s.follow != nil {
				// Without INFO (renamed away) the check is skipped:
				// failovers are then noticed when the old master drops
				// its clients.
				if id, err := serverID(ctx, cn); err == nil {
					s.runID.Store(&id)
				}
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
		wctx, stop := context.WithCancel(ctx)
		s.stopWatch, s.watched = stop, make(chan struct{})
		go s.watch(wctx)
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
	if s.moved.Load() {
		return nil, false, errors.New("the client's commands reach another server now (a failover?)")
	}
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
		s.keep.pong(m)
	}
	return nil, false, nil
}

// watch checks every followEvery, until ctx ends, that the caller's
// commands still reach the server the session tracks, and ends the
// session when they do not. Quiet or not: a session on a demoted master,
// now a replica, goes on hearing every write through replication, and
// would never notice that it no longer tracks the master until that
// master fails, while the caller's commands spend seconds on it. It runs
// beside the session, not in its loop: the check waits on the caller's
// client, whose connections are all taken when Redis comes back from a
// pause with every reader's command queued, and an invalidation held up
// behind it for 77 ms once let copies be served beyond the bound.
func (s *trackingSession) watch(ctx context.Context) {
	defer close(s.watched)
	want := s.runID.Load()
	if s.follow == nil || want == nil {
		return
	}
	t := time.NewTicker(followEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, breaker.AnswerWithin)
		id, err := serverID(cctx, s.follow)
		cancel()
		if err == nil && id != *want {
			s.moved.Store(true)
			if end := s.end.Load(); end != nil {
				(*end)() // the copies are unverified from now, not from next's return
			}
			s.ps.Close() // next returns
			return
		}
	}
}

// serverID returns the run_id of the server rdb's commands reach.
func serverID(ctx context.Context, rdb interface {
	Info(context.Context, ...string) *redis.StringCmd
}) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("INFO server: %w", err)
	}
	for line := range strings.Lines(info) {
		if id, ok := strings.CutPrefix(line, "run_id:"); ok {
			return strings.TrimSpace(id), nil
		}
	}
	return "", errors.New("INFO server: no run_id")
}

func (s *trackingSession) close() {
	if s.stopWatch != nil {
		s.stopWatch()
		<-s.watched
	}
	s.ps.Close()
	s.sub.Close()
}
