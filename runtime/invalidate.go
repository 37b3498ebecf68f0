package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"

	"github.com/redis/go-redis/v9"
)

// Invalidation modes: how a write on any instance, or by any other writer,
// reaches the local copies of every instance.
const (
	// InvalidateTracking uses Redis server-assisted client-side caching in
	// broadcasting mode: every write to a key under the entity's prefix, by
	// anyone, is announced on __redis__:invalidate. It needs no server
	// memory per key.
	InvalidateTracking = "tracking"
	// InvalidatePubSub has the repositories' own writes announced on a
	// channel of the entity's; writes by other programs are not seen.
	// Tracking falls back to it on a server without client tracking.
	InvalidatePubSub = "pubsub"
	// InvalidateOff leaves freshness to refresh alone.
	InvalidateOff = "off"
)

// invalidateChannel is the channel InvalidatePubSub uses for an entity
// whose keys start with prefix.
func invalidateChannel(prefix string) string { return "hotkeygen:invalidate:" + prefix }

// session is one live subscription. next blocks for the next batch of
// invalidated keys; it returns a nil batch and no error when it timed out
// and the connection is still healthy, and flush when the node was
// emptied (FLUSHALL, FLUSHDB).
type session interface {
	next(ctx context.Context) (keys []string, flush bool, err error)
	// arm hands the session, once its node counts it live, the function
	// that ends its coverage (for a session that can tell it is lost
	// before next returns) and the voucher its answered PINGs feed.
	arm(end func(), v voucher)
	close()
}

// keepingUp paces a session's stamped PINGs, which vouch for its node
// (see vouched, freshness.go), and tells from their answers whether the
// node answers at all. Only the session's goroutine uses it.
type keepingUp struct {
	v      *voucher  // nil until the session is armed
	pinged time.Time // when the last PING was sent, for pacing
	// out holds the stamps of the PINGs sent and not answered yet, oldest
	// first; a node that stopped answering has at most maxOut of them.
	out [maxOut]int64
	n   int
}

// maxOut is how many PINGs a session leaves unanswered before it stops
// sending more: a frozen server reads none of them, and the oldest is
// all the verdict needs.
const maxOut = 16

// ping sends a stamped PING on ps when vouchEvery has passed since the
// last. A half-open connection is noticed the same way: the answers stop,
// and with them the vouching.
func (k *keepingUp) ping(ctx context.Context, ps *redis.PubSub) error {
	if k.v == nil || time.Since(k.pinged) < vouchEvery || k.n == maxOut {
		return nil
	}
	k.pinged = time.Now()
	stamp := k.v.clock.Now().UnixNano()
	if err := ps.Ping(ctx, strconv.FormatInt(stamp, 10)); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	k.out[k.n] = stamp
	k.n++
	return nil
}

// pong takes the answer to a PING: it vouches for the node up to its
// stamp, and one answered within breaker.AnswerWithin says the node
// answers.
func (k *keepingUp) pong(m *redis.Pong) {
	if k.v == nil {
		return
	}
	stamp, err := strconv.ParseInt(m.Payload, 10, 64)
	if err != nil {
		return // not ours
	}
	k.v.n.vouched.Store(stamp)
	k.v.n.Answered(k.v.clock.Now())
	i := 0
	for i < k.n && k.out[i] <= stamp {
		i++
	}
	k.n = copy(k.out[:], k.out[i:k.n])
	if now := k.v.clock.Now(); now.UnixNano()-stamp < int64(breaker.AnswerWithin) {
		k.v.heard(nil, now)
	}
}

// asked returns when a wait for Redis's next message that begins now
// gives up: the moment a quiet session knows nothing came until.
func (k *keepingUp) asked() time.Time {
	if k.v == nil {
		return time.Time{}
	}
	return k.v.clock.Now().Add(vouchEvery)
}

// quiet is called when the session read its connection dry and nothing
// came until the wait that began before (asked) gave up: a PING
// unanswered for breaker.AnswerWithin by then says the node does not
// answer, hung, paused, too busy or cut off, as a refused connection
// would, and its breaker opens or stays open. The verdict is dated by
// that wait, not by when the session's goroutine got back to it, so a
// session held up by the scheduler reaches it later, never wrongly: an
// answer that came meanwhile is read first on the next call.
func (k *keepingUp) quiet(until time.Time) {
	if k.v == nil || k.n == 0 {
		return
	}
	if now := k.v.clock.Now(); until.After(now) {
		until = now // a Clock that does not move with the wall, in tests
	}
	if waited := time.Duration(until.UnixNano() - k.out[0]); waited >= breaker.AnswerWithin {
		k.v.heard(breaker.NoAnswer{Waited: waited}, until)
	}
}

// listener keeps the session of one node alive. Between the end of one
// session and the start of the next the node is uncovered, and its copies
// are unverified (see freshness.go).
type listener struct {
	name    string // for logs: the node address, or the channel
	n       *node
	connect func(ctx context.Context) (session, error)
}

// Session retry timing: the first retry is immediate (a killed connection
// on a healthy server is the common case), later ones back off.
const (
	sessionBackoff    = 50 * time.Millisecond
	sessionBackoffMax = time.Second
)

// errRedial is the cause Suspect is given when a session's client
// redials its lost connection by itself.
var errRedial = errors.New("the invalidation connection was lost")

// listen runs l until ctx ends.
func (c *Cache[K, V]) listen(ctx context.Context, l listener) {
	backoff := time.Duration(0)
	var failing error // logged once per run of failures
	for ctx.Err() == nil {
		s, err := l.connect(ctx)
		if errors.As(err, new(noTracking)) {
			// The server does not know client tracking (before Redis 6, or
			// CLIENT renamed away): announce our own writes instead.
			c.log.Warn("hotkey: Redis does not support client tracking; invalidating through Pub/Sub, which sees only the repositories' own writes", "via", l.name, "err", err)
			c.pubsubFallback.Store(true)
			l.connect = pubsubListener(c.rdb, invalidateChannel(c.prefix))
			continue
		}
		if err == nil {
			if failing != nil {
				c.log.Info("hotkey: invalidation connection back", "via", l.name)
				failing = nil
			}
			backoff = 0
			l.n.sessionStarted(c.cfg.Clock.Now())
			c.invalidationUp.Add(1)
			end := sync.OnceFunc(func() {
				c.invalidationUp.Add(-1)
				l.n.sessionEnded(c.cfg.Clock.Now())
			})
			s.arm(func() {
				// The session's client redials: its connection is gone,
				// and the node may be too. Ask it now, not when go-redis
				// gives up redialling.
				end()
				c.spawn(func() { l.n.Suspect(errRedial) })
			}, voucher{clock: c.cfg.Clock, n: l.n, heard: l.n.Heard})
			c.revalidate(ctx, l.n)
			err = c.receive(ctx, s)
			end()
			s.close()
			if ctx.Err() != nil {
				return
			}
			if breaker.ConnectionFailure(err) {
				l.n.Suspect(err)
			}
			c.count.invalidationResets.Add(1)
		} else if ctx.Err() == nil {
			l.n.Failed(ctx, err)
		}
		if ctx.Err() != nil {
			return
		}
		if failing == nil {
			c.log.Warn("hotkey: invalidation connection lost; hot keys are read from Redis until it is back", "via", l.name, "err", err)
			failing = err
		}
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		backoff = min(max(2*backoff, sessionBackoff), sessionBackoffMax)
	}
}

func (c *Cache[K, V]) receive(ctx context.Context, s session) error {
	for {
		keys, flush, err := s.next(ctx)
		switch {
		case err != nil:
			return err
		case flush:
			c.flushed()
		case len(keys) > 0:
			c.invalidate(keys)
		}
		if c.cfg.onInvalidate != nil && (flush || len(keys) > 0) {
			c.cfg.onInvalidate(keys)
		}
	}
}

// startInvalidation starts the listeners: one per node with tracking (per
// master on a cluster, following the topology), one for the entity's
// channel with Pub/Sub, none when invalidation is off.
func (c *Cache[K, V]) startInvalidation(prefix string) error {
	switch c.cfg.Invalidate {
	case InvalidateOff:
		c.nodes.one.coveredForever(c.cfg.Clock.Now()) // refresh alone keeps copies fresh
		return nil
	case InvalidatePubSub:
		c.spawnListener(c.ctx, listener{name: invalidateChannel(prefix), n: c.nodes.one, connect: pubsubListener(c.rdb, invalidateChannel(prefix))})
		return nil
	}
	switch r := c.rdb.(type) {
	case *redis.Client:
		// A Sentinel failover client's master moves: the session checks
		// that it still tracks the server the client's own commands reach.
		o := track.ConnOptions(r.Options())
		c.spawnListener(c.ctx, listener{name: o.Addr, n: c.nodes.one, connect: trackingListener(o, prefix, r)})
	case *redis.ClusterClient:
		c.spawn(func() { c.followCluster(r, prefix) })
	default:
		return fmt.Errorf("hotkey: invalidation: tracking needs a *redis.Client or *redis.ClusterClient, got %T; use WithInvalidate(%q)", c.rdb, InvalidatePubSub)
	}
	return nil
}

func (c *Cache[K, V]) spawnListener(ctx context.Context, l listener) {
	c.spawn(func() { c.listen(ctx, l) })
}

// noTracking reports a server that does not know what tracking needs
// (CLIENT ID, CLIENT TRACKING), as opposed to a connection failure or a
// refusal that may pass (-BUSY, -LOADING, an ACL being changed).
type noTracking struct{ err error }

func (e noTracking) Error() string { return e.err.Error() }
func (e noTracking) Unwrap() error { return e.err }

// refused wraps err as noTracking when Redis answered that it does not
// know the command or subcommand.
func refused(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := strings.ToLower(rerr.Error())
		if strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown subcommand") {
			return noTracking{err}
		}
	}
	return err
}

// followEvery paces watch's check that a Sentinel failover client still
// reaches the server its session tracks. Its master moves under a live
// pool: on the Sentinel's +switch-master the client writes to the new
// master at once, while the session, still on the old one, hears of those
// writes only once the old master is the new one's replica and has caught
// up, which took 50 ms and more on a loaded machine. Checked as often as
// the session vouches, the session stops vouching within the bound of the
// caller's client moving. Other clients' servers move only with their
// connections (a DNS name pointed elsewhere): followOthersEvery.
const (
	followEvery       = vouchEvery
	followOthersEvery = 100 * time.Millisecond
)

// trackingSession is one RESP2 connection that turned on CLIENT TRACKING
// in BCAST mode for the prefix, redirected to itself, and subscribed to
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
	// follow is the caller's client when it is a *redis.Client, and runID
	// the server the session tracks, read on its connection: when
	// follow's commands reach another server (a Sentinel promoted a
	// replica), the session ends (see watch).
	follow *redis.Client
	runID  atomic.Pointer[string] // set before the subscription is confirmed, and by each redial
	// moved is set when watch saw follow reach another server; stopWatch
	// and watched stop and wait for watch.
	moved     atomic.Bool
	every     time.Duration // how often watch checks
	stopWatch context.CancelFunc
	watched   chan struct{}
}

func trackingListener(base *redis.Options, prefix string, follow *redis.Client) func(context.Context) (session, error) {
	return func(ctx context.Context) (session, error) {
		s := &trackingSession{follow: follow, every: followOthersEvery}
		if follow != nil && follow.Options().Addr == "FailoverClient" { // go-redis's NewFailoverClient
			s.every = followEvery
		}
		opts := *base
		opts.Protocol = 2 // invalidations arrive as plain Pub/Sub messages
		opts.PoolSize, opts.MinIdleConns, opts.MaxIdleConns = 1, 0, 1
		opts.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			s.dials.Add(1)
			id, err := cn.ClientID(ctx).Result()
			if err != nil {
				return fmt.Errorf("CLIENT ID: %w", refused(err))
			}
			args := []any{"CLIENT", "TRACKING", "on", "REDIRECT", id, "BCAST"}
			if prefix != "" {
				args = append(args, "PREFIX", prefix)
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
	asked := s.keep.asked()
	msg, err := s.ps.ReceiveTimeout(ctx, vouchEvery)
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

// watch checks every s.every, until ctx ends, that the caller's
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
	t := time.NewTicker(s.every)
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

// isFlush recognises the invalidation FLUSHALL and FLUSHDB send: a message
// whose payload is null, which go-redis reports as an error after reading
// it whole (the connection stays usable).
func isFlush(err error) bool {
	return strings.Contains(err.Error(), "unsupported pubsub message payload: <nil>")
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

// pubsubSession is a subscription to an entity's channel, on which the
// repositories announce their own writes.
type pubsubSession struct {
	ps   *redis.PubSub
	subs int // subscription confirmations seen; go-redis resubscribes silently after a reconnect
	keep keepingUp
}

func pubsubListener(rdb redis.UniversalClient, channel string) func(context.Context) (session, error) {
	return func(ctx context.Context) (session, error) {
		s := &pubsubSession{ps: rdb.Subscribe(ctx, channel)}
		context.AfterFunc(ctx, func() { s.ps.Close() })
		if _, err := s.ps.Receive(ctx); err != nil {
			s.close()
			return nil, fmt.Errorf("subscribe to %s: %w", channel, err)
		}
		s.subs = 1
		return s, nil
	}
}

func (s *pubsubSession) next(ctx context.Context) ([]string, bool, error) {
	if err := s.keep.ping(ctx, s.ps); err != nil {
		return nil, false, err
	}
	asked := s.keep.asked()
	msg, err := s.ps.ReceiveTimeout(ctx, vouchEvery)
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
		s.keep.pong(m)
	case *redis.Subscription:
		if s.subs++; s.subs > 1 {
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

// publishLogEvery spaces the lines about failed announcements: while
// PUBLISH fails, every write's does.
const publishLogEvery = time.Second

// announce publishes a write of key for InvalidatePubSub. A failed publish
// is counted and logged, the first and then at most one a second
// (publishLogEvery): the key's other copies then wait for refresh.
func (c *Cache[K, V]) announce(ctx context.Context, key string) {
	if c.cfg.Invalidate != InvalidatePubSub && !c.pubsubFallback.Load() {
		return
	}
	err := c.rdb.Publish(ctx, invalidateChannel(c.prefix), key).Err()
	if err == nil || !c.countRedisError(ctx, err) {
		return
	}
	if unlogged, ok := c.publishLog.allow(c.cfg.Clock.Now(), publishLogEvery); ok {
		c.log.Warn("hotkey: publishing an invalidation failed; other instances' copies of the key wait for refresh", "key", key, "err", err, "unlogged_failures", unlogged)
	}
}
