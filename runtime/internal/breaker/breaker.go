// Package breaker is the breaker of one Redis node: it says whether the
// calls for the node's keys may wait on Redis, and keeps asking the node
// while they may not. It knows neither keys nor values: the runtime holds
// one Breaker per node, and hands it the verdicts of the node's
// invalidation session (Heard, Suspect) and the errors of its commands
// (Failed).
package breaker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Breaker is a node's breaker. While it is open, reads of the node's keys
// do not wait on Redis: hot keys are answered from their local copies and
// cold reads fail at once with the runtime's ErrUnavailable, so an outage
// costs callers nothing and Redis no stampede when it comes back.
//
// One verdict opens, keeps and closes it: a ping on the node's probe
// connection (Check). A connection-level failure of a command, or a lost
// invalidation session, asks for one at once; the breaker opens only if
// it fails too, since a killed connection says nothing of the server, and
// an open breaker serves copies nobody vouches for. A probe per node then
// pings every ProbeEvery and closes the breaker when the node answers.
//
// An open breaker is believed for StaleLease after the last failed ping,
// no longer (see Down): every moment it stays open after Redis is back is
// a moment other writers' acknowledged writes go unseen. The probe alone
// cannot promise that: a goroutine woken by a timer waits its turn behind
// every runnable reader, and readers that hit memory never yield. The
// readers themselves ask instead, once the verdict is older than
// StaleLease: the first has a ping sent, and they all wait for its answer,
// off the CPU the ping needs, or for their own context's end.
//
// A client's own retries and timeouts still bound the commands already
// sent when the failure happens; only what comes after is spared.
type Breaker struct {
	name string          // the node's, in errors and logs
	ctx  context.Context // ends when the node is no longer followed, or its hub closed
	// ping asks the node whether it answers, on a connection of the
	// probe's that it may use while the caller's pool is failing.
	ping func(context.Context) error
	cfg  *Config

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
	// opened is cancelled when the breaker opens and replaced when it
	// closes: a read waiting on Redis stops waiting then, answered from
	// its local copy or failing fast like the reads after it.
	opened atomic.Pointer[openSignal]
	// asking is the ping in flight that readers wait on when the breaker's
	// evidence is too old, nil when none is; guarded by mu.
	asking *answer
	// confirming is set while a session's report that the node is silent
	// is being checked (see Heard).
	confirming atomic.Bool

	// answers counts the answers the node's session and breaker heard
	// (PONGs, pings): while the node answers, however late, a copy whose
	// key was written before the last of them is not served as a stale
	// read (see Answers).
	answers atomic.Uint64
	// answered is when the last of them was heard (the Clock's UnixNano).
	answered atomic.Int64
}

// Config is what the breakers of one hub share: what a breaker needs
// of the hub, passed in rather than reached for.
type Config struct {
	// Now is the hub's clock: it dates the breaker's evidence.
	Now func() time.Time
	// Log says when a breaker opens (Warn) and closes (Info).
	Log *slog.Logger
	// Spawn runs f on a goroutine of the hub's, one its close waits
	// for, unless its close has begun, and reports whether f runs.
	Spawn func(f func()) bool
	// ProbeEvery paces the probe of an open breaker; 0 means the
	// constant ProbeEvery. Tests slow it to show readers do not need it.
	ProbeEvery time.Duration
	// Unavailable is the error a refused call's cause wraps: the
	// runtime's ErrUnavailable, which callers match with errors.Is.
	Unavailable error
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

// New returns the closed breaker of the node called name, which ping
// asks, until ctx ends: the node is no longer followed, or the hub
// closed.
func New(ctx context.Context, name string, ping func(context.Context) error, cfg *Config) *Breaker {
	b := &Breaker{name: name, ctx: ctx, ping: ping, cfg: cfg}
	b.rearm()
	return b
}

// Probe timing: a probe pings every ProbeEvery while the breaker is open,
// on its own connection, with no backoff: every moment the breaker stays
// open after Redis is back, hot keys are served from copies nobody vouches
// for while others write, so the breaker must close within a few tens of
// milliseconds of Redis answering. A ping costs one round trip.
const ProbeEvery = 20 * time.Millisecond

// AnswerWithin is how long a node may take to answer a ping before it
// counts as down: a ping of the breaker's that takes longer fails, and a
// session whose PING goes unanswered that long says so (Heard), which
// opens the breaker once a ping confirms it. A node that is hung, paused,
// partitioned away or too busy looks to its callers like a dead one, only
// slower, and a hot key's node is slow before it dies: hot reads must not
// wait on it for the client's ReadTimeout (3 s by default) any more than
// on a refused connection. 100 ms is twice the invalidation bound and a
// hundred times a loaded server's round trip.
const AnswerWithin = 100 * time.Millisecond

// StaleLease is how long a failed ping keeps the breaker believed: half
// the 50 ms invalidation bound, so that a write acknowledged by a Redis
// that came back just after the failure is seen by a read well within the
// bound, whatever the probe's luck with the scheduler.
const StaleLease = 25 * time.Millisecond

// SlowFor is how long after its last answer a node counts as slow rather
// than silent, and how long a read waits for a slow node (the runtime's
// patience): a node answering 300 ms late has gaps that long between its
// answers.
const SlowFor = 4 * AnswerWithin

// Unreachable reports whether the breaker is open.
func (b *Breaker) Unreachable() bool { return b.down.Load() }

// open opens the breaker at now, a failure having been seen then, and
// reports whether it was closed.
func (b *Breaker) open(now time.Time) bool {
	b.seen.Store(now.UnixNano())
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down.Load() {
		return false
	}
	b.downSince = now
	b.down.Store(true)
	b.opened.Load().cancel()
	return true
}

// close closes the breaker, ready to open again, and reports whether it
// was open.
func (b *Breaker) close() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.down.Load() {
		return false
	}
	b.rearm()
	b.down.Store(false)
	return true
}

// UnreachableSince returns when the breaker opened, or the zero time
// while it is closed.
func (b *Breaker) UnreachableSince() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.down.Load() {
		return time.Time{}
	}
	return b.downSince
}

// WhenOpened returns a channel closed when the breaker opens.
func (b *Breaker) WhenOpened() <-chan struct{} { return b.opened.Load().ctx.Done() }

// AfterOpened arranges for f to run on its own goroutine when the
// breaker opens, as context.AfterFunc does, and returns the function that
// stops it.
func (b *Breaker) AfterOpened(f func()) (stop func() bool) {
	return context.AfterFunc(b.opened.Load().ctx, f)
}

func (b *Breaker) rearm() {
	ctx, cancel := context.WithCancel(context.Background())
	b.opened.Store(&openSignal{ctx, cancel})
}

// UntilOpened returns ctx, cancelled too when the breaker opens, and the
// function that releases it: a command sent before the breaker opened
// may otherwise spend its client's dial retries, seconds, on a node the
// runtime already knows is down. A command that has not returned within
// AnswerWithin asks for a verdict on the node (Suspect), so a node that
// hangs is found out by the reads waiting on it even where no session
// pings it (invalidate=off).
func (b *Breaker) UntilOpened(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(b.opened.Load().ctx, cancel)
	slow := time.AfterFunc(AnswerWithin, func() {
		b.cfg.Spawn(func() { b.Suspect(NoAnswer{Waited: AnswerWithin}) })
	})
	return ctx, func() { slow.Stop(); stop(); cancel() }
}

// Unavailable is the cause of the error of a call that the open breaker
// stopped: the runtime's ErrUnavailable, the node's address, and what
// was last seen of it.
func (b *Breaker) Unavailable() error {
	last := "no answer"
	if p := b.lastErr.Load(); p != nil {
		last = (*p).Error()
	}
	return refusal{fmt.Errorf("%w at %s (last error: %s); it is retried in the background", b.cfg.Unavailable, b.name, last)}
}

// Down reports whether calls for the node's keys must not wait on Redis:
// the breaker is open and a failure was seen within StaleLease. Past
// that, the caller asks the node (or waits for the ping in flight) before
// it answers: a node that answers has its breaker closed, and the caller
// goes on to Redis as if it had never opened.
func (b *Breaker) Down(ctx context.Context) bool {
	if !b.down.Load() {
		return false
	}
	if b.cfg.Now().UnixNano()-b.seen.Load() < int64(StaleLease) {
		return true
	}
	return b.ask(ctx)
}

// ask pings the node once for everyone who needs to know now whether it
// answers, and reports whether it is still down. The caller that finds
// no ping in flight has one sent (Check) on a goroutine of the hub's,
// on the node's probe connection and within two pings of AnswerWithin,
// since others may wait on its answer; every caller, that one included,
// waits until the answer or its own context's end, and no longer: the
// verdict is the breaker's business, the caller's deadline its own. An
// ended context gets "not down": its caller then fails on its context,
// and is never answered from a copy nobody vouches for. A closed hub
// answers "down".
func (b *Breaker) ask(ctx context.Context) bool {
	b.mu.Lock()
	a := b.asking
	mine := a == nil
	if mine {
		a = &answer{done: make(chan struct{})}
		b.asking = a
	}
	b.mu.Unlock()
	if mine && !b.cfg.Spawn(func() { b.answer(a, b.Check()) }) {
		b.answer(a, true)
	}
	select {
	case <-a.done:
		return a.down
	case <-ctx.Done():
		return false
	}
}

// answer gives a, the ping in flight, its verdict.
func (b *Breaker) answer(a *answer, down bool) {
	a.down = down
	b.mu.Lock()
	b.asking = nil
	b.mu.Unlock()
	close(a.done)
}

// Check pings the node, once more on a new connection when the first
// ping was sent and failed, and applies the verdict (Judge). A connection
// killed, or dropped by a restart, says nothing of the server; nor does
// one ping unanswered for AnswerWithin, which a redis-server starved of
// CPU on a loaded machine now and then is: a node is found down only when
// the second goes unanswered too. It reports whether the node is down.
func (b *Breaker) Check() bool {
	sent := b.cfg.Now()
	// Each step of a ping (dial, write, read) is bounded by AnswerWithin
	// from its start (ProbeOptions); ctx only bounds the two pings of a
	// client that is not the probe's.
	ctx, cancel := context.WithTimeout(b.ctx, 4*AnswerWithin)
	err := b.ping(ctx)
	if err != nil && !NotSent(err) && ctx.Err() == nil {
		err = b.ping(ctx)
	}
	cancel()
	if b.ctx.Err() != nil {
		return true // the node is no longer followed, or the hub closed
	}
	// A failure is dated no later than the ping's deadline: a goroutine
	// held up after it would otherwise date evidence it no longer has.
	at := b.cfg.Now()
	if deadline := sent.Add(AnswerWithin); err != nil && deadline.Before(at) {
		at = deadline
	}
	return b.Judge(err, at)
}

// Heard takes a session's verdict on the node, reached at at: an answer
// closes the breaker; silence keeps an open breaker open, and has a
// closed one's node pinged (Check, beside the session, which goes on
// reading), so that one unanswered PING alone never opens it.
func (b *Breaker) Heard(err error, at time.Time) {
	if err == nil || b.down.Load() {
		b.Judge(err, at)
		return
	}
	if !b.confirming.CompareAndSwap(false, true) {
		return
	}
	if !b.cfg.Spawn(func() {
		defer b.confirming.Store(false)
		b.Suspect(err)
	}) {
		b.confirming.Store(false)
	}
}

// Judge applies a verdict on the node reached at now, a ping's or a
// session's: an answer (nil) closes the breaker, a failure opens it, or
// renews the evidence that keeps it open, and starts the probe that
// closes it. It reports whether the node is down.
func (b *Breaker) Judge(err error, now time.Time) bool {
	if err == nil {
		b.Answered(now)
		if b.down.Load() && b.close() {
			b.cfg.Log.Info("hotkey: Redis answers again", "node", b.name)
		}
		return false
	}
	b.lastErr.Store(&err)
	if !b.open(now) {
		return true
	}
	b.cfg.Log.Warn("hotkey: Redis unreachable; hot keys are served from memory and other reads fail fast until it answers", "node", b.name, "err", err)
	b.cfg.Spawn(b.probe)
	return true
}

// Failed looks at the error of a command sent to the node under ctx:
// after a connection-level failure it asks for a verdict on the node
// (ask), which opens the breaker if the node does not answer either, and
// waits for it until ctx ends: a caller that can wait leaves with the
// breaker settled, so its next call does not send a command to a node
// found down; one whose deadline comes first returns its error then, and
// the ping goes on.
func (b *Breaker) Failed(ctx context.Context, err error) {
	if !ConnectionFailure(err) {
		return
	}
	b.lastErr.Store(&err)
	if !b.down.Load() {
		b.ask(ctx)
	}
}

// probe asks the node every ProbeEvery until it answers, sharing the ping
// of any reader asking at the same time (see ask).
func (b *Breaker) probe() {
	every := b.cfg.ProbeEvery
	if every == 0 {
		every = ProbeEvery
	}
	for {
		t := time.NewTimer(every)
		select {
		case <-b.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if !b.down.Load() || !b.ask(b.ctx) {
			return
		}
	}
}

// Suspect asks for a verdict on the node at once when its invalidation
// session lost its connection (cause). A process that died, a master a
// Sentinel is replacing, a partition: the session's connection is the
// first to know, while the caller's commands may still be spending their
// client's dial retries (five attempts 100 ms apart in go-redis, then the
// command's own retries) before they fail. Hot reads waiting on those are
// answered from memory as soon as the breaker opens.
func (b *Breaker) Suspect(cause error) {
	if b.down.Load() || b.ctx.Err() != nil {
		return
	}
	b.lastErr.Store(&cause)
	b.ask(b.ctx)
}

// Answered counts an answer of the node's, heard at now.
func (b *Breaker) Answered(now time.Time) {
	b.answers.Add(1)
	b.answered.Store(now.UnixNano())
}

// Answers returns how many answers of the node's were heard: a copy
// notes it when a write of its key is heard, and a later count says the
// node answered since.
func (b *Breaker) Answers() uint64 { return b.answers.Load() }

// Answering reports whether the node answered within SlowFor of now,
// however late: a slow node, whose reads are worth waiting for, as
// opposed to a silent one.
func (b *Breaker) Answering(now time.Time) bool {
	return now.UnixNano()-b.answered.Load() < int64(SlowFor)
}
