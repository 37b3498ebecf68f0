// Package breaker is the breaker of one Redis node: it says whether the
// calls for the node's keys may wait on Redis, and keeps asking the node
// while they may not. It knows neither keys nor values: the runtime holds
// one Breaker per node, and hands it the verdicts of the node's
// invalidation session (Heard, Suspect) and the errors of its commands
// (Failed).
package breaker

import (
	"context"
	"errors"
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
// One watcher decides (watch.go): while the node is in doubt or down, it
// writes a PING every ProbeEvery on a connection of its own (the Line) and
// reads the answers as they come. A connection-level failure of a
// command, a lost invalidation session or a session's PING left
// unanswered raises a doubt; the breaker opens only if the watcher hears
// no answer either, since a killed connection says nothing of the server,
// and an open breaker serves copies nobody vouches for. It closes at the
// first prompt answer.
//
// An open breaker is believed for StaleLease after its last evidence, no
// longer (see Down): every moment it stays open after Redis is back is a
// moment other writers' acknowledged writes go unseen. While the node
// stays silent, the watcher renews the evidence every ProbeEvery, and so
// do the sessions' unanswered PINGs; a reader that finds the evidence
// older than StaleLease (the watcher starved of CPU by readers that hit
// memory and never yield) waits for the next verdict, off the CPU the
// watcher needs, or for its own context's end.
//
// A client's own retries and timeouts still bound the commands already
// sent when the failure happens; only what comes after is spared.
type Breaker struct {
	name string          // the node's, in errors and logs
	ctx  context.Context // ends when the node is no longer followed, or its hub closed
	// line is the watcher's connection to the node, which it may use
	// while the caller's pool is failing.
	line Line
	cfg  *Config

	down atomic.Bool
	// seen is the latest moment the node was known not to answer (the
	// Clock's UnixNano): the open breaker's evidence. It only moves on.
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
	// verdict is closed and replaced at every verdict on the node (an
	// answer, or evidence that it does not answer): a caller waiting for
	// one wakes up and looks again.
	verdict atomic.Pointer[chan struct{}]
	// doubts counts the doubts raised about the node, and cleared the
	// last of them a prompt answer cleared: an answer to a PING written
	// after a doubt was raised. silent says the last doubt was itself a
	// silence (a session's PING or a command left unanswered), which the
	// watcher's own then confirms.
	doubts, cleared atomic.Uint64
	silent          atomic.Bool
	// watching is set while the watcher runs; seq numbers its PINGs,
	// used by one watcher at a time.
	watching atomic.Bool
	seq      uint64

	// answers counts the answers the node's session and watcher heard
	// (PONGs): while the node answers, however late, a copy whose key was
	// written before the last of them is not served as a stale read (see
	// Answers).
	answers atomic.Uint64
	// answered is when the last of them was heard (the Clock's UnixNano),
	// and late whether it came AnswerWithin or more after its PING: the
	// node is slow.
	answered atomic.Int64
	late     atomic.Bool
	// refused is one more than answers when a connection to the node was
	// last refused: while it is, no answer came since, and the node is
	// gone, not slow.
	refused atomic.Uint64
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
	// Unavailable is the error a refused call's cause wraps: the
	// runtime's ErrUnavailable, which callers match with errors.Is.
	Unavailable error
}

type openSignal struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns the closed breaker of the node called name, which its
// watcher asks on line, until ctx ends: the node is no longer followed,
// or the hub closed. The line is the caller's to close, after ctx ends.
func New(ctx context.Context, name string, line Line, cfg *Config) *Breaker {
	b := &Breaker{name: name, ctx: ctx, line: line, cfg: cfg}
	b.rearm()
	v := make(chan struct{})
	b.verdict.Store(&v)
	return b
}

// Probe timing: the watcher writes a PING every ProbeEvery while the node
// is in doubt or down, and reads for answers in windows of ProbeEvery, so
// that the evidence of a silent node is renewed that often, well within
// StaleLease, and a node back is heard within a round trip of its answer:
// every moment the breaker stays open after Redis is back, hot keys are
// served from copies nobody vouches for while others write. A PING left
// unanswered is not written again; a node that reads none of them has at
// most maxOut waiting.
const ProbeEvery = 10 * time.Millisecond

// AnswerWithin is how long a node may take to answer a PING before it
// counts as silent: a session whose PING goes unanswered that long says
// so (Heard), and the breaker opens once the watcher's PING, on another
// connection, goes unanswered that long too. A node that is hung, paused,
// partitioned away or too busy looks to its callers like a dead one, only
// slower, and a hot key's node is slow before it dies: hot reads must not
// wait on it for the client's ReadTimeout (3 s by default) any more than
// on a refused connection. 100 ms is twice the invalidation bound and a
// hundred times a loaded server's round trip.
const AnswerWithin = 100 * time.Millisecond

// StaleLease is how long evidence that the node does not answer keeps
// the breaker believed: half the 50 ms invalidation bound, so that a write
// acknowledged by a Redis that came back just after the evidence is seen
// by a read well within the bound, whatever the watcher's luck with the
// scheduler.
const StaleLease = 25 * time.Millisecond

// SlowFor is how long after its last answer a node counts as slow rather
// than silent, and how long a read waits for a slow node (the runtime's
// patience): a node answering 300 ms late has gaps that long between its
// answers.
const SlowFor = 4 * AnswerWithin

// SilentAfter is how long a node that answered nothing counts as silent
// rather than slow, when its last answer came promptly: the sessions and
// the watcher write a PING every ProbeEvery and keep writing while their
// answers are late (up to MaxOut), so a node that answers, however late,
// answers at that pace. A node whose last answer came late counts as
// silent only after SlowFor: when its delay grows (a path that slows from
// 100 to 300 ms), no answer comes for the new delay.
const SilentAfter = 3 * ProbeEvery

// MaxOut is how many PINGs a session or the watcher leaves unanswered
// before it writes no more: enough for a PING every ProbeEvery to a node
// that answers SlowFor late, so that its answers go on coming every
// ProbeEvery (Silent), and a frozen server, which reads none of them,
// holds a few hundred bytes of them.
const MaxOut = int(SlowFor/ProbeEvery) + 8

// Unreachable reports whether the breaker is open.
func (b *Breaker) Unreachable() bool { return b.down.Load() }

// open opens the breaker, a failure having been seen at now, and reports
// whether it was closed.
func (b *Breaker) open(now time.Time) bool {
	b.renew(now)
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

// renew moves the evidence on to at, unless it is newer already: a
// verdict reached late, by a goroutine the scheduler held up, never dates
// the evidence back.
func (b *Breaker) renew(at time.Time) {
	for {
		old := b.seen.Load()
		if at.UnixNano() <= old || b.seen.CompareAndSwap(old, at.UnixNano()) {
			return
		}
	}
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
// function that releases it once the command sent under it returned, or
// its caller gave up (answered false): a command sent before the breaker
// opened may otherwise spend its client's dial retries, seconds, on a
// node the runtime already knows is down. A command that has not
// returned within AnswerWithin raises a doubt about the node (Suspect),
// whether its caller still waits or not, so a node that hangs is found
// out by the reads sent to it even where no session pings it
// (invalidate=off) and every caller gives up sooner.
func (b *Breaker) UntilOpened(ctx context.Context) (context.Context, func(answered bool)) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(b.opened.Load().ctx, cancel)
	slow := time.AfterFunc(AnswerWithin, func() { b.Suspect(NoAnswer{Waited: AnswerWithin}) })
	return ctx, func(answered bool) {
		if answered {
			slow.Stop()
		}
		stop()
		cancel()
	}
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
// the breaker is open and its evidence is within StaleLease. Past that,
// the caller waits for the watcher's next verdict (await): a node that
// answers has its breaker closed, and the caller goes on to Redis as if
// it had never opened.
func (b *Breaker) Down(ctx context.Context) bool {
	if !b.down.Load() {
		return false
	}
	return b.await(ctx, 0)
}

// Check raises a doubt about the node and waits until the watcher settles
// it (await): it reports whether the node is down.
func (b *Breaker) Check(ctx context.Context) bool { return b.await(ctx, b.doubt(false)) }

// await waits until the watcher's verdicts settle the caller's question,
// and returns the answer: for Check's caller (mine, its doubt), whether
// the breaker opened before a prompt answer cleared the doubt; for Down's
// (mine 0), whether the breaker is open on evidence within StaleLease,
// the watcher being asked for more while it is older. It waits until
// its own context's end and no longer: the verdict is the watcher's
// business, the caller's deadline its own. An ended context gets "not
// down": its caller then fails on its context, and is never answered
// from a copy nobody vouches for. A closed hub answers "down".
func (b *Breaker) await(ctx context.Context, mine uint64) bool {
	for {
		v := b.verdict.Load()
		switch down := b.down.Load(); {
		case mine != 0 && (down || b.cleared.Load() >= mine):
			return down
		case mine == 0 && !down:
			return false
		case mine == 0 && b.cfg.Now().UnixNano()-b.seen.Load() < int64(StaleLease):
			return true
		case mine == 0:
			b.doubt(false) // the watcher runs while the breaker is open; this restarts one that could not
		}
		select {
		case <-*v:
		case <-ctx.Done():
			return false
		case <-b.ctx.Done():
			return true
		}
	}
}

// doubt raises a doubt about the node, a silence when silent, and starts
// the watcher unless it runs. It returns the doubt's number: a prompt
// answer to a PING written after it clears it (cleared).
func (b *Breaker) doubt(silent bool) uint64 {
	b.silent.Store(silent)
	n := b.doubts.Add(1)
	if b.watching.CompareAndSwap(false, true) && !b.cfg.Spawn(b.watch) {
		b.watching.Store(false)
	}
	return n
}

// WhenJudged returns a channel closed at the next verdict on the node (an
// answer, or evidence that it does not answer): a caller waiting for the
// node to be found silent looks again then, and needs no clock of its own.
func (b *Breaker) WhenJudged() <-chan struct{} { return *b.verdict.Load() }

// settled wakes everyone waiting for a verdict on the node.
func (b *Breaker) settled() {
	v := make(chan struct{})
	close(*b.verdict.Swap(&v))
}

// Heard takes a session's verdict on the node, reached at at: an answer
// closes the breaker; silence renews the evidence of an open breaker, and
// raises a doubt about a closed one's node, which the watcher settles
// beside the session, so that one unanswered PING alone never opens it.
func (b *Breaker) Heard(err error, at time.Time) {
	if err == nil || b.down.Load() {
		b.Judge(err, at)
		return
	}
	b.Suspect(err)
}

// Judge applies a verdict on the node reached at now, a PING's or a
// session's: an answer (nil) closes the breaker, a failure opens it, or
// renews the evidence that keeps it open, and the watcher runs until it
// closes. It reports whether the node is down.
func (b *Breaker) Judge(err error, now time.Time) bool {
	defer b.settled()
	if err == nil {
		b.Answered(now, false)
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
	b.doubt(false)
	return true
}

// Failed looks at the error of a command sent to the node under ctx:
// after a connection-level failure it raises a doubt about the node, which
// opens the breaker if the node does not answer the watcher either, and
// waits for the verdict until ctx ends (Check): a caller that can wait
// leaves with the breaker settled, so its next call does not send a
// command to a node found down; one whose deadline comes first returns
// its error then, and the watcher goes on.
func (b *Breaker) Failed(ctx context.Context, err error) {
	if !ConnectionFailure(err) {
		return
	}
	b.lastErr.Store(&err)
	if !b.down.Load() {
		b.Check(ctx)
	}
}

// Suspect raises a doubt about the node at once (see doubt) when its
// invalidation session lost its connection or left a PING unanswered, or a
// command waited AnswerWithin (cause). A process that died, a master a
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
	b.doubt(errors.As(cause, new(NoAnswer)))
}

// Answered counts an answer of the node's, heard at now, late when it
// came AnswerWithin or more after its PING.
func (b *Breaker) Answered(now time.Time, late bool) {
	b.late.Store(late)
	b.answers.Add(1)
	b.answered.Store(now.UnixNano())
}

// Answers returns how many answers of the node's were heard: a copy
// notes it when a write of its key is heard, and a later count says the
// node answered since.
func (b *Breaker) Answers() uint64 { return b.answers.Load() }

// Silent reports whether the node had stopped answering by now: no
// answer heard for SilentAfter (SlowFor when the last came late), or a
// connection to it refused since the last one. A node that is hung,
// partitioned away or gone is silent; one that is slow is not, however
// late its answers, and it takes writes whose invalidations are on their
// way meanwhile: only a silent node's copies may be served without asking
// it.
func (b *Breaker) Silent(now time.Time) bool {
	quiet := SilentAfter
	if b.late.Load() {
		quiet = SlowFor
	}
	return now.UnixNano()-b.answered.Load() >= int64(quiet) || b.refused.Load() == b.answers.Load()+1
}

// Answering reports whether the node answered within SlowFor of now,
// however late: a slow node, whose reads are worth waiting for, as
// opposed to a silent one.
func (b *Breaker) Answering(now time.Time) bool {
	return now.UnixNano()-b.answered.Load() < int64(SlowFor)
}
