package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// health is a node's breaker. While it is open, reads of the node's keys
// do not wait on Redis: hot keys are answered from their local copies and
// cold reads fail at once with ErrUnavailable, so an outage costs callers
// nothing and Redis no stampede when it comes back.
//
// One verdict opens, keeps and closes it: a ping on the node's probe
// connection (check). A connection-level failure of a command, or a lost
// invalidation session, asks for one at once; the breaker opens only if
// it fails too, since a killed connection says nothing of the server, and
// an open breaker serves copies nobody vouches for. A probe per node then
// pings every probeEvery and closes the breaker when the node answers.
//
// An open breaker is believed for staleLease after the last failed ping,
// no longer (see down): every moment it stays open after Redis is back is
// a moment other writers' acknowledged writes go unseen. The probe alone
// cannot promise that: a goroutine woken by a timer waits its turn behind
// every runnable reader, and readers that hit memory never yield. The
// readers themselves ask instead, once the verdict is older than
// staleLease: the first has a ping sent, and they all wait for its answer,
// off the CPU the ping needs, or for their own context's end.
//
// A client's own retries and timeouts still bound the commands already
// sent when the failure happens; only what comes after is spared.
type health struct {
	down atomic.Bool
	// seen is when a ping of the node last failed (the Clock's UnixNano):
	// the open breaker's evidence.
	seen atomic.Int64
	// mu orders the opening and closing of the breaker with downSince,
	// when it opened, so that Stats never sees one without the other;
	// reads only load down.
	mu        sync.Mutex
	downSince time.Time
	lastErr   atomic.Pointer[error]
	// ping asks the node whether it answers, on a connection of the
	// probe's that it may use while the caller's pool is failing.
	ping func(context.Context) error
	// opened is cancelled when the breaker opens and replaced when it
	// closes: a read waiting on Redis stops waiting then, answered from
	// its local copy or failing fast like the reads after it.
	opened atomic.Pointer[openSignal]
	// asking is the ping in flight that readers wait on when the breaker's
	// evidence is too old, nil when none is; guarded by mu.
	asking *answer
	// confirming is set while a session's report that n is silent is
	// being checked (see heardFrom).
	confirming atomic.Bool
}

// answer is the outcome of one ping of a node, shared by all who waited.
type answer struct {
	done chan struct{}
	down bool // set before done is closed
}

type openSignal struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// unreachable reports whether the node's breaker is open.
func (h *health) unreachable() bool { return h.down.Load() }

// open opens the breaker at now, a failure having been seen then, and
// reports whether it was closed.
func (h *health) open(now time.Time) bool {
	h.seen.Store(now.UnixNano())
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

// close closes the breaker, ready to open again, and reports whether it
// was open.
func (h *health) close() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Load() {
		return false
	}
	h.rearm()
	h.down.Store(false)
	return true
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
// runtime already knows is down. A command that has not returned within
// answerWithin asks for a verdict on n (suspect), so a node that hangs is
// found out by the reads waiting on it even where no session pings it
// (invalidate=off).
func (c *Cache[K, V]) untilOpened(ctx context.Context, n *node) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(n.opened.Load().ctx, cancel)
	slow := time.AfterFunc(answerWithin, func() {
		c.spawn(func() { c.suspect(n, noAnswer{waited: answerWithin}) })
	})
	return ctx, func() { slow.Stop(); stop(); cancel() }
}

// refuse counts a call refused because n is unreachable, and returns the
// cause of its error, for the caller to name the operation (opErr).
func (c *Cache[K, V]) refuse(n *node) error {
	c.count.failedFast.Add(1)
	return n.unavailable()
}

// unavailable is the cause of the error of a call that n's open breaker
// stopped: ErrUnavailable, n's address, and what was last seen of it.
func (n *node) unavailable() error {
	last := "no answer"
	if p := n.lastErr.Load(); p != nil {
		last = (*p).Error()
	}
	return fmt.Errorf("%w at %s (last error: %s); it is retried in the background", ErrUnavailable, n.name, last)
}

// Probe timing: a probe pings every probeEvery while the breaker is open,
// on its own connection, with no backoff: every moment the breaker stays
// open after Redis is back, hot keys are served from copies nobody vouches
// for while others write, so the breaker must close within a few tens of
// milliseconds of Redis answering. A ping costs one round trip.
const probeEvery = 20 * time.Millisecond

// answerWithin is how long a node may take to answer a ping before it
// counts as down: a ping of the breaker's that takes longer fails, and a
// session whose PING goes unanswered that long opens the breaker (see
// keepingUp.quiet). A node that is hung, paused, partitioned away or too
// busy looks to its callers like a dead one, only slower, and a hot key's
// node is slow before it dies: hot reads must not wait on it for the
// client's ReadTimeout (3 s by default) any more than on a refused
// connection. 100 ms is twice the invalidation bound and a hundred times
// a loaded server's round trip.
const answerWithin = 100 * time.Millisecond

// staleLease is how long a failed ping keeps the breaker believed: half
// the 50 ms invalidation bound, so that a write acknowledged by a Redis
// that came back just after the failure is seen by a read well within the
// bound, whatever the probe's luck with the scheduler.
const staleLease = 25 * time.Millisecond

// down reports whether calls for n's keys must not wait on Redis: its
// breaker is open and a failure was seen within staleLease. Past that,
// the caller asks n (or waits for the ping in flight) before it answers:
// a node that answers has its breaker closed, and the caller goes on to
// Redis as if it had never opened.
func (c *Cache[K, V]) down(ctx context.Context, n *node) bool {
	if !n.down.Load() {
		return false
	}
	if c.cfg.Clock.Now().UnixNano()-n.seen.Load() < int64(staleLease) {
		return true
	}
	return c.ask(ctx, n)
}

// ask pings n once for everyone who needs to know now whether it answers,
// and reports whether it is still down. The caller that finds no ping in
// flight has one sent (check) on a goroutine of the Cache's, on n's probe
// connection and within two pings of answerWithin, since others may wait
// on its answer; every caller, that one included, waits until the answer
// or its own context's end, and no longer: the verdict is the Cache's
// business, the caller's deadline its own. An ended context gets "not
// down": its caller then fails on its context, and is never answered from
// a copy nobody vouches for. A closed Cache answers "down".
func (c *Cache[K, V]) ask(ctx context.Context, n *node) bool {
	n.mu.Lock()
	a := n.asking
	mine := a == nil
	if mine {
		a = &answer{done: make(chan struct{})}
		n.asking = a
	}
	n.mu.Unlock()
	if mine && !c.spawn(func() { c.answer(n, a, c.check(n)) }) {
		c.answer(n, a, true)
	}
	select {
	case <-a.done:
		return a.down
	case <-ctx.Done():
		return false
	}
}

// answer gives a, the ping of n in flight, its verdict.
func (c *Cache[K, V]) answer(n *node, a *answer, down bool) {
	a.down = down
	n.mu.Lock()
	n.asking = nil
	n.mu.Unlock()
	close(a.done)
}

// check pings n, once more on a new connection when the first ping was
// sent and failed, and applies the verdict (judged). A connection killed,
// or dropped by a restart, says nothing of the server; nor does one ping
// unanswered for answerWithin, which a redis-server starved of CPU on a
// loaded machine now and then is: a node is found down only when the
// second goes unanswered too. It reports whether n is down.
func (c *Cache[K, V]) check(n *node) bool {
	sent := c.cfg.Clock.Now()
	// Each step of a ping (dial, write, read) is bounded by answerWithin
	// from its start (probeOptions); ctx only bounds the two pings of a
	// client that is not the probe's.
	ctx, cancel := context.WithTimeout(n.ctx, 4*answerWithin)
	err := n.ping(ctx)
	if err != nil && !notSent(err) && ctx.Err() == nil {
		err = n.ping(ctx)
	}
	cancel()
	if n.ctx.Err() != nil {
		return true // the node is no longer followed, or the Cache closed
	}
	// A failure is dated no later than the ping's deadline: a goroutine
	// held up after it would otherwise date evidence it no longer has.
	at := c.cfg.Clock.Now()
	if deadline := sent.Add(answerWithin); err != nil && deadline.Before(at) {
		at = deadline
	}
	return c.judged(n, err, at)
}

// heardFrom takes a session's verdict on n, reached at at: an answer
// closes n's breaker; silence keeps an open breaker open, and has a
// closed one's node pinged (check, beside the session, which goes on
// reading), so that one unanswered PING alone never opens it.
func (c *Cache[K, V]) heardFrom(n *node, err error, at time.Time) {
	if err == nil || n.down.Load() {
		c.judged(n, err, at)
		return
	}
	if !n.confirming.CompareAndSwap(false, true) {
		return
	}
	if !c.spawn(func() {
		defer n.confirming.Store(false)
		c.suspect(n, err)
	}) {
		n.confirming.Store(false)
	}
}

// judged applies a verdict on n reached at now, a ping's or a session's:
// an answer (nil) closes n's breaker, a failure opens it, or renews the
// evidence that keeps it open, and starts the probe that closes it. It
// reports whether n is down.
func (c *Cache[K, V]) judged(n *node, err error, now time.Time) bool {
	if err == nil {
		n.heardFrom(now)
		if n.down.Load() && n.close() {
			c.log.Info("hotkey: Redis answers again", "node", n.name)
		}
		return false
	}
	n.lastErr.Store(&err)
	if !n.open(now) {
		return true
	}
	c.log.Warn("hotkey: Redis unreachable; hot keys are served from memory and other reads fail fast until it answers", "node", n.name, "err", err)
	c.spawn(func() { c.probe(n) })
	return true
}

// failed looks at the error of a command sent to n under ctx: after a
// connection-level failure it asks for a verdict on n (ask), which opens
// n's breaker if n does not answer either, and waits for it until ctx
// ends: a caller that can wait leaves with the breaker settled, so its
// next call does not send a command to a node found down; one whose
// deadline comes first returns its error then, and the ping goes on.
func (c *Cache[K, V]) failed(ctx context.Context, n *node, err error) {
	if !connectionFailure(err) {
		return
	}
	n.lastErr.Store(&err)
	if !n.down.Load() {
		c.ask(ctx, n)
	}
}

// probe asks n every probeEvery until it answers, sharing the ping of any
// reader asking at the same time (see ask).
func (c *Cache[K, V]) probe(n *node) {
	for {
		t := time.NewTimer(c.cfg.probeEvery)
		select {
		case <-n.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if !n.down.Load() || !c.ask(n.ctx, n) {
			return
		}
	}
}

// suspect asks for a verdict on n at once when its invalidation session
// lost its connection (cause). A process that died, a master a Sentinel
// is replacing, a partition: the session's connection is the first to
// know, while the caller's commands may still be spending their client's
// dial retries (five attempts 100 ms apart in go-redis, then the
// command's own retries) before they fail. Hot reads waiting on those are
// answered from memory as soon as the breaker opens.
func (c *Cache[K, V]) suspect(n *node, cause error) {
	if n.down.Load() || n.ctx.Err() != nil {
		return
	}
	n.lastErr.Store(&cause)
	c.ask(n.ctx, n)
}

// probeOptions are the options of a node's probe client, made from o, a
// copy of those of a client of the node (see connOptions: go-redis writes
// to a live client's options): one connection, one dial attempt and short
// timeouts, so that a ping says within a fraction of a second whether
// the node answers, where the caller's client would retry for seconds. It
// does not name itself (CLIENT SETINFO): after a restart, the ping that
// closes the breaker comes one round trip sooner.
//
// Nor does its pool ever see a dial fail. A go-redis pool whose dials
// failed PoolSize times stops dialling: it answers with the last dial
// error while a goroutine of its own redials once a second, so a probe
// that met a dead Redis once would not see it restarted for up to a
// second. The probe's dials hand the pool a connection that fails its
// first use with the dial's error instead, discarded like any broken one.
func probeOptions(o *redis.Options) *redis.Options {
	p := *o
	p.PoolSize, p.MinIdleConns, p.MaxIdleConns, p.MaxActiveConns = 1, 0, 1, 0
	p.MaxRetries, p.DialerRetries = -1, 1
	p.DialTimeout, p.ReadTimeout, p.WriteTimeout = answerWithin, answerWithin, answerWithin
	p.DisableIdentity = true
	p.OnConnect = nil
	dial := p.Dialer
	if dial == nil {
		dial = redis.NewDialer(&p)
	}
	p.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := dial(ctx, network, addr)
		if err != nil {
			return failedDial{err}, nil
		}
		return cn, nil
	}
	return &p
}

// failedDial is a connection that could not be made: every use returns
// the dial's error.
type failedDial struct{ err error }

func (f failedDial) Read([]byte) (int, error)         { return 0, f.err }
func (f failedDial) Write([]byte) (int, error)        { return 0, f.err }
func (f failedDial) Close() error                     { return nil }
func (f failedDial) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (f failedDial) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (f failedDial) SetDeadline(time.Time) error      { return nil }
func (f failedDial) SetReadDeadline(time.Time) error  { return nil }
func (f failedDial) SetWriteDeadline(time.Time) error { return nil }

// notSent reports an error raised before the command could reach Redis:
// no connection could be had. A write that failed so did not land.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, redis.ErrPoolTimeout)
}

// countRedisError counts err, the failure of a command sent under ctx, as a
// Redis error (Stats.RedisErrors), unless ctx had ended and err says so:
// the context's error, or the timeout of a read whose deadline was the
// context's (go-redis's ContextTimeoutEnabled). Whoever stopped waiting,
// a caller's deadline or cancellation, or Close, says nothing of Redis.
// A dial that timed out under a ctx still live returns
// context.DeadlineExceeded too, and counts. It reports whether err
// counted, for the callers that log what did.
func (c *Cache[K, V]) countRedisError(ctx context.Context, err error) bool {
	if contextEnded(ctx) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)) {
		return false
	}
	c.count.redisErrors.Add(1)
	return true
}

// contextEnded reports whether ctx has ended or its deadline has passed:
// a read whose deadline was ctx's times out when the deadline passes, a
// moment before ctx's own timer ends it. Deadlines are the wall clock's.
func contextEnded(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
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
