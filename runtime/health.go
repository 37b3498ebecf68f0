package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// health is a node's breaker. The first connection-level failure of a
// command marks the node unreachable; from then on, reads of its keys do
// not wait on Redis: hot keys are answered from their local copies and
// cold reads fail at once with ErrUnavailable, so an outage costs callers
// nothing and Redis no stampede when it comes back. One probe per node
// pings it every probeEvery and closes the breaker as soon as it answers.
//
// A client's own retries and timeouts still bound the commands already
// sent when the failure happens; only what comes after is spared.
type health struct {
	down atomic.Bool
	// mu orders the opening and closing of the breaker with downSince,
	// when it opened, so that Stats never sees one without the other;
	// reads only load down.
	mu        sync.Mutex
	downSince time.Time
	lastErr   atomic.Pointer[error]
	// ping asks the node whether it answers, on a connection the probe
	// may use while the caller's pool is failing.
	ping func(context.Context) error
	// reach asks whether the caller's own client reaches the node: a
	// lost session is not the node's failure while that client still
	// gets answers on the connections it holds.
	reach func(context.Context) error
	// opened is cancelled when the breaker opens and replaced when it
	// closes: a read waiting on Redis stops waiting then, answered from
	// its local copy or failing fast like the reads after it.
	opened atomic.Pointer[openSignal]
}

type openSignal struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// unreachable reports whether the node's breaker is open.
func (h *health) unreachable() bool { return h.down.Load() }

// open opens the breaker at now, and reports whether it was closed.
func (h *health) open(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down.Load() {
		return false
	}
	h.downSince = now
	h.down.Store(true)
	h.opened.Load().cancel()
	return true
}

// close closes the breaker, ready to open again.
func (h *health) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rearm()
	h.down.Store(false)
}

// unreachableSince returns when the breaker opened, or the zero time
// while it is closed.
func (h *health) unreachableSince() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Load() {
		return time.Time{}
	}
	return h.downSince
}

// whenOpened returns a channel closed when the breaker opens.
func (h *health) whenOpened() <-chan struct{} { return h.opened.Load().ctx.Done() }

func (h *health) rearm() {
	ctx, cancel := context.WithCancel(context.Background())
	h.opened.Store(&openSignal{ctx, cancel})
}

// untilOpened returns ctx, cancelled too when n's breaker opens, and the
// function that releases it: a command sent before the breaker opened
// may otherwise spend its client's dial retries, seconds, on a node the
// runtime already knows is down.
func (h *health) untilOpened(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.opened.Load().ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// refuse counts a call refused because n is unreachable, and returns its
// error.
func (c *Cache[K, V]) refuse(n *node, op, key string) error {
	c.count.failedFast.Add(1)
	last := "no answer"
	if p := n.lastErr.Load(); p != nil {
		last = (*p).Error()
	}
	return fmt.Errorf("hotkey: %s %q: %w (last error: %s); it is retried in the background", op, key, ErrUnavailable, last)
}

// Probe timing: a probe pings every probeEvery while the breaker is open,
// on its own connection, with no backoff: every moment the breaker stays
// open after Redis is back, hot keys are served from copies nobody vouches
// for while others write, so the breaker must close within a few tens of
// milliseconds of Redis answering. A ping costs one round trip.
const (
	probeEvery   = 20 * time.Millisecond
	probeTimeout = 250 * time.Millisecond
)

// failed looks at the error of a command sent to n: a connection-level
// failure opens n's breaker and starts its probe.
func (c *Cache[K, V]) failed(n *node, err error) {
	if !connectionFailure(err) {
		return
	}
	n.lastErr.Store(&err)
	if n.open(c.cfg.Clock.Now()) {
		c.log.Warn("hotkey: Redis unreachable; hot keys are served from memory and other reads fail fast until it answers", "node", n.name, "err", err)
		c.wg.Add(1)
		go c.probe(n)
	}
}

// probe pings n until it answers, then closes its breaker.
func (c *Cache[K, V]) probe(n *node) {
	defer c.wg.Done()
	for {
		t := time.NewTimer(probeEvery)
		select {
		case <-n.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(n.ctx, probeTimeout)
		err := n.ping(ctx)
		cancel()
		if err == nil {
			n.close()
			c.log.Info("hotkey: Redis answers again", "node", n.name)
			return
		}
		if n.ctx.Err() != nil {
			return
		}
		n.lastErr.Store(&err)
	}
}

// suspectTimeout bounds the ping of suspect: on loopback or in a data
// centre a live Redis answers in well under a millisecond, and a dead one
// refuses the connection at once or never.
const suspectTimeout = 100 * time.Millisecond

// suspect pings n at once, through the caller's client, when its
// invalidation session lost its connection (cause), and opens the breaker
// unless n answers within suspectTimeout. A process
// that died, a master a Sentinel is replacing, a partition: the session's
// connection is the first to know, while the caller's commands may still
// be spending their client's dial retries (five attempts 100 ms apart in
// go-redis, then the command's own retries) before they fail. Hot reads
// waiting on those are answered from memory as soon as the breaker opens.
func (c *Cache[K, V]) suspect(n *node, cause error) {
	if n.unreachable() || n.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(n.ctx, suspectTimeout)
	err := n.reach(ctx)
	cancel()
	if err == nil || n.ctx.Err() != nil {
		return
	}
	// A ping that timed out is no answer, which connectionFailure would
	// take for the caller giving up: say it in words.
	c.failed(n, fmt.Errorf("no answer to PING within %v after the invalidation connection failed (%v): %s", suspectTimeout, cause, err))
}

// probeOptions are the options of a node's probe client, made from o, a
// copy of those of a client of the node (see connOptions: go-redis writes
// to a live client's options): one connection, one dial attempt and short
// timeouts, so that a ping says within a fraction of a second whether
// the node answers, where the caller's client would retry for seconds.
func probeOptions(o *redis.Options) *redis.Options {
	p := *o
	p.PoolSize, p.MinIdleConns, p.MaxIdleConns, p.MaxActiveConns = 1, 0, 1, 0
	p.MaxRetries, p.DialerRetries = -1, 1
	p.DialTimeout, p.ReadTimeout, p.WriteTimeout = probeTimeout, probeTimeout, probeTimeout
	p.OnConnect = nil
	return &p
}

// notSent reports an error raised before the command could reach Redis:
// no connection could be had. A write that failed so did not land.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, redis.ErrPoolTimeout)
}

// connectionFailure reports an error that says the node cannot be reached
// or cannot serve: the network, a closed pool, a timeout, or a server
// reply that means the same (loading, busy, no master). Replies about the
// command itself, a missing key, a client the caller closed and the
// caller giving up are not.
func connectionFailure(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrClosed) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnavailable) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range []string{"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true
}
