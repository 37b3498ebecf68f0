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

// health is a node's breaker. The first connection-level failure of a
// command marks the node unreachable; from then on, reads of its keys do
// not wait on Redis: hot keys are answered from their local copies and
// cold reads fail at once with ErrUnavailable, so an outage costs callers
// nothing and Redis no stampede when it comes back. One probe per node
// pings it with backoff and closes the breaker as soon as it answers.
//
// A client's own retries and timeouts still bound the commands already
// sent when the failure happens; only what comes after is spared.
type health struct {
	down    atomic.Bool
	lastErr atomic.Pointer[error]
	// ping asks the node whether it answers, on a connection the probe
	// may use while the caller's pool is failing.
	ping func(context.Context) error
}

// unreachable reports whether the node's breaker is open.
func (h *health) unreachable() bool { return h.down.Load() }

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

// Probe timing: the first ping follows the failure closely, later ones
// back off, and none waits long enough to keep a recovered Redis unused
// for more than a fraction of a second.
const (
	probeFirst   = 20 * time.Millisecond
	probeMax     = 200 * time.Millisecond
	probeTimeout = 250 * time.Millisecond
)

// failed looks at the error of a command sent to n: a connection-level
// failure opens n's breaker and starts its probe.
func (c *Cache[K, V]) failed(n *node, err error) {
	if !connectionFailure(err) {
		return
	}
	n.lastErr.Store(&err)
	if n.down.CompareAndSwap(false, true) {
		c.log.Warn("hotkey: Redis unreachable; hot keys are served from memory and other reads fail fast until it answers", "node", n.name, "err", err)
		c.wg.Add(1)
		go c.probe(n)
	}
}

// probe pings n until it answers, then closes its breaker.
func (c *Cache[K, V]) probe(n *node) {
	defer c.wg.Done()
	wait := probeFirst
	for {
		t := time.NewTimer(wait)
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
			n.down.Store(false)
			c.log.Info("hotkey: Redis answers again", "node", n.name)
			return
		}
		if n.ctx.Err() != nil {
			return
		}
		n.lastErr.Store(&err)
		wait = min(2*wait, probeMax)
	}
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
