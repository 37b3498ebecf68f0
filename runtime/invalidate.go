package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

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

// invalidated drops the local copies of keys, whoever wrote them: the next
// read goes to Redis. Invalidations are not trusted to carry the new
// value, so nothing is reloaded here.
func (c *Cache[K, V]) invalidated(keys []string) {
	hs := c.det.hot.Load()
	for _, key := range keys {
		if e := hs.byName[key]; e != nil {
			e.mu.Lock()
			e.gen.Add(1)
			c.local.Delete(e.k)
			e.mu.Unlock()
			c.count.invalidations.Add(1)
		}
	}
	if c.cfg.onInvalidate != nil {
		c.cfg.onInvalidate(keys)
	}
}

// invalidateAll drops every local copy: the invalidation connection was
// lost, so any of them may have changed unseen.
func (c *Cache[K, V]) invalidateAll() {
	for _, e := range c.det.hot.Load().m {
		e.mu.Lock()
		e.gen.Add(1)
		c.local.Delete(e.k)
		e.mu.Unlock()
	}
}

// listener keeps one subscription for invalidations alive, resubscribing
// after any failure, and drops every local copy whenever it had to: while
// it was away, writes went unseen.
type listener struct {
	name    string // for logs: the node address, or the channel
	connect func(ctx context.Context) (session, error)
}

// session is one live subscription; next blocks for the next batch of
// invalidated keys, returning a nil batch and no error when it timed out
// and the connection is still healthy.
type session interface {
	next(ctx context.Context) ([]string, error)
	close()
}

// listen runs l until ctx ends.
func (c *Cache[K, V]) listen(ctx context.Context, l listener) {
	defer c.wg.Done()
	backoff := 50 * time.Millisecond
	lost := false
	for ctx.Err() == nil {
		s, err := l.connect(ctx)
		if errors.As(err, new(noTracking)) {
			// The server has no client-side caching (before Redis 6, or
			// CLIENT renamed away): fall back to announcing our own writes.
			c.log.Warn("hotkey: Redis refused client tracking; invalidating through Pub/Sub, which sees only the repositories' own writes", "via", l.name, "err", err)
			c.pubsubFallback.Store(true)
			l = pubsubListener(c.rdb, invalidateChannel(c.prefix))
			continue
		}
		if err == nil {
			if lost {
				c.log.Info("hotkey: invalidation connection back", "via", l.name)
				lost = false
			}
			c.invalidationUp.Add(1)
			backoff = 50 * time.Millisecond
			err = c.receive(ctx, s)
			c.invalidationUp.Add(-1)
			s.close()
		}
		if ctx.Err() != nil {
			return
		}
		c.invalidateAll()
		c.count.invalidationResets.Add(1)
		if !lost {
			c.log.Warn("hotkey: invalidation connection lost; local copies dropped until it is back", "via", l.name, "err", err)
			lost = true
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (c *Cache[K, V]) receive(ctx context.Context, s session) error {
	for {
		keys, err := s.next(ctx)
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			c.invalidated(keys)
		}
	}
}

// startInvalidation starts one listener per Redis node (tracking) or one
// for the entity's channel (pubsub).
func (c *Cache[K, V]) startInvalidation(prefix string) error {
	var ls []listener
	switch c.cfg.Invalidate {
	case InvalidateOff:
		return nil
	case InvalidatePubSub:
		ls = append(ls, pubsubListener(c.rdb, invalidateChannel(prefix)))
	case InvalidateTracking:
		nodes, err := nodeOptions(c.ctx, c.rdb)
		if err != nil {
			return err
		}
		// A single-node client may be a Sentinel failover client, whose
		// master moves: each session checks it still tracks the server the
		// client's own commands reach.
		follow, _ := c.rdb.(*redis.Client)
		for _, o := range nodes {
			ls = append(ls, trackingListener(o, prefix, follow))
		}
	}
	for _, l := range ls {
		c.wg.Add(1)
		go c.listen(c.ctx, l)
	}
	return nil
}

// nodeOptions returns the connection options of every node whose writes
// must be tracked: the one node of a single client (or the current master
// of a Sentinel failover client), every master of a cluster.
func nodeOptions(ctx context.Context, rdb redis.UniversalClient) ([]*redis.Options, error) {
	switch r := rdb.(type) {
	case *redis.Client:
		return []*redis.Options{connOptions(r.Options())}, nil
	case *redis.ClusterClient:
		var opts []*redis.Options
		ch := make(chan *redis.Options, 64)
		err := r.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			ch <- connOptions(node.Options())
			return nil
		})
		close(ch)
		for o := range ch {
			opts = append(opts, o)
		}
		if err != nil {
			return nil, fmt.Errorf("hotkey: invalidation: list cluster masters: %w", err)
		}
		return opts, nil
	default:
		return nil, fmt.Errorf("hotkey: invalidation: tracking needs a *redis.Client or *redis.ClusterClient, got %T; use WithInvalidate(%q)", rdb, InvalidatePubSub)
	}
}

// noTracking reports a server that refuses what tracking needs (CLIENT ID,
// CLIENT TRACKING), as opposed to a connection failure.
type noTracking struct{ err error }

func (e noTracking) Error() string { return e.err.Error() }
func (e noTracking) Unwrap() error { return e.err }

// refused wraps err as noTracking when Redis itself answered with an error.
func refused(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return noTracking{err}
	}
	return err
}

// connOptions takes from a live client's options what opening another
// connection to the same server needs: where and how to dial (for a
// Sentinel failover client, the dialer that finds the current master),
// credentials, database and timeouts. The live options are not copied
// whole: go-redis updates some of their fields under its own lock.
func connOptions(o *redis.Options) *redis.Options {
	return &redis.Options{
		Network:                      o.Network,
		Addr:                         o.Addr,
		Dialer:                       o.Dialer,
		Username:                     o.Username,
		Password:                     o.Password,
		CredentialsProvider:          o.CredentialsProvider,
		CredentialsProviderContext:   o.CredentialsProviderContext,
		StreamingCredentialsProvider: o.StreamingCredentialsProvider,
		DB:                           o.DB,
		DialTimeout:                  o.DialTimeout,
		ReadTimeout:                  o.ReadTimeout,
		WriteTimeout:                 o.WriteTimeout,
		TLSConfig:                    o.TLSConfig,
		ClientName:                   o.ClientName,
	}
}

// receiveTimeout bounds a wait for invalidations, after which the session
// checks its connections.
const receiveTimeout = time.Second

// trackingSession is a subscription to __redis__:invalidate on one
// connection, and a second connection whose CLIENT TRACKING in BCAST mode
// redirects the node's invalidations for the prefix to it.
type trackingSession struct {
	sub, trk *redis.Client
	ps       *redis.PubSub
	conn     *redis.Conn
	redial   atomic.Int32 // connections the subscriber made; more than one means it reconnected
	// follow is the caller's client when it is a *redis.Client, and runID
	// the server the session tracks: when follow's commands reach another
	// server (a Sentinel promoted a replica), the session ends.
	follow *redis.Client
	runID  string
}

func trackingListener(base *redis.Options, prefix string, follow *redis.Client) listener {
	return listener{name: base.Addr, connect: func(ctx context.Context) (session, error) {
		s := &trackingSession{follow: follow}
		var subID atomic.Int64
		// RESP2: invalidations arrive as plain messages on the subscribed
		// connection, which go-redis hands to Receive.
		subOpts := *base
		subOpts.Protocol = 2
		subOpts.PoolSize, subOpts.MinIdleConns, subOpts.MaxIdleConns = 1, 0, 1
		subOpts.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			s.redial.Add(1)
			id, err := cn.ClientID(ctx).Result()
			subID.Store(id)
			return err
		}
		s.sub = redis.NewClient(&subOpts)
		trkOpts := *base
		trkOpts.Protocol = 2
		trkOpts.PoolSize, trkOpts.MinIdleConns, trkOpts.MaxIdleConns, trkOpts.OnConnect = 1, 0, 1, nil
		s.trk = redis.NewClient(&trkOpts)
		s.ps = s.sub.Subscribe(ctx, "__redis__:invalidate")
		// Closing the subscription interrupts a blocked receive; the rest
		// is closed by the goroutine that uses it.
		context.AfterFunc(ctx, func() { s.ps.Close() })
		if _, err := s.ps.Receive(ctx); err != nil { // the subscription's confirmation
			s.close()
			return nil, fmt.Errorf("subscribe to __redis__:invalidate: %w", refused(err))
		}
		s.conn = s.trk.Conn()
		args := []any{"CLIENT", "TRACKING", "on", "REDIRECT", subID.Load(), "BCAST"}
		if prefix != "" {
			args = append(args, "PREFIX", prefix)
		}
		if err := s.conn.Do(ctx, args...).Err(); err != nil {
			s.close()
			return nil, fmt.Errorf("CLIENT TRACKING: %w", refused(err))
		}
		if s.follow != nil {
			// Without INFO (renamed away) the check is skipped: failovers
			// are then noticed when the old master drops its clients.
			if id, err := serverID(ctx, s.conn); err == nil {
				s.runID = id
			} else {
				s.follow = nil
			}
		}
		return s, nil
	}}
}

func (s *trackingSession) next(ctx context.Context) ([]string, error) {
	msg, err := s.ps.ReceiveTimeout(ctx, receiveTimeout)
	if s.redial.Load() > 1 {
		return nil, errors.New("the subscriber reconnected: its tracking redirect is gone")
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		// Quiet: check that the tracking connection is still there, or
		// invalidations would stop without a word.
		if err := s.conn.Ping(ctx).Err(); err != nil {
			return nil, fmt.Errorf("tracking connection: %w", err)
		}
		if s.follow != nil {
			if id, err := serverID(ctx, s.follow); err == nil && id != s.runID {
				return nil, errors.New("the client's commands reach another server now (a failover?)")
			}
		}
		return nil, nil
	case err != nil:
		return nil, err
	}
	if m, ok := msg.(*redis.Message); ok {
		if m.PayloadSlice != nil {
			return m.PayloadSlice, nil
		}
		return []string{m.Payload}, nil
	}
	return nil, nil
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
	if s.conn != nil {
		s.conn.Close()
	}
	s.ps.Close()
	s.sub.Close()
	s.trk.Close()
}

// pubsubSession is a subscription to an entity's channel, on which the
// repositories announce their own writes.
type pubsubSession struct {
	ps   *redis.PubSub
	subs int // subscription confirmations seen; go-redis resubscribes silently after a reconnect
}

func pubsubListener(rdb redis.UniversalClient, channel string) listener {
	return listener{name: channel, connect: func(ctx context.Context) (session, error) {
		s := &pubsubSession{ps: rdb.Subscribe(ctx, channel)}
		context.AfterFunc(ctx, func() { s.ps.Close() })
		if _, err := s.ps.Receive(ctx); err != nil {
			s.close()
			return nil, fmt.Errorf("subscribe to %s: %w", channel, err)
		}
		s.subs = 1
		return s, nil
	}}
}

func (s *pubsubSession) next(ctx context.Context) ([]string, error) {
	msg, err := s.ps.ReceiveTimeout(ctx, receiveTimeout)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return nil, s.ps.Ping(ctx)
	case err != nil:
		return nil, err
	}
	switch m := msg.(type) {
	case *redis.Subscription:
		if s.subs++; s.subs > 1 {
			return nil, errors.New("the subscriber reconnected")
		}
	case *redis.Message:
		return []string{m.Payload}, nil
	}
	return nil, nil
}

func (s *pubsubSession) close() { s.ps.Close() }

// announce publishes a write of key for InvalidatePubSub. A failed publish
// is counted and logged: the key's other copies then wait for refresh.
func (c *Cache[K, V]) announce(ctx context.Context, key string) {
	if c.cfg.Invalidate != InvalidatePubSub && !c.pubsubFallback.Load() {
		return
	}
	if err := c.rdb.Publish(ctx, invalidateChannel(c.prefix), key).Err(); err != nil {
		c.count.redisErrors.Add(1)
		c.log.Warn("hotkey: publishing an invalidation failed", "key", key, "err", err)
	}
}
