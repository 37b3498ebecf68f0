package breaker

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Line is the watcher's connection to its node: PINGs are written on
// it without waiting for their answers, and the answers read as they
// come, each wait bounded. A go-redis PubSub that subscribed to nothing is
// one: a PING is answered with its payload, a read that times out leaves
// the connection as it was, and a connection that failed is made again
// at the next use. A line that can tell whether its connection was read
// dry (a Drainer) has every read that found nothing checked against it.
type Line interface {
	Ping(ctx context.Context, payload ...string) error
	ReceiveTimeout(ctx context.Context, timeout time.Duration) (any, error)
}

// A Drainer tells whether a connection holds no byte unread (Socket).
type Drainer interface{ Drained() bool }

// The watcher's rules, and why they keep the freshness promise.
//
// Evidence. A PING written at w and still unanswered when a read that
// waited until u found nothing says the node ran no event loop from w to
// u, less a round trip: a server that runs reads every socket with data
// in it, and would have answered. A write another client had
// acknowledged in that time would have been answered beside the PING. So
// an open breaker is evidence that no write was acknowledged between the
// PING's writing and u, and u is what it is dated. A read whose goroutine
// the scheduler held up past its deadline returns a timeout without
// looking at the socket (Go checks the deadline first), so an empty read
// counts only once the line's socket is seen drained after it (a
// Drainer): an answer that came meanwhile waits there for the next read.
// A PING is dated when its write returned, after it reached the socket.
//
// Opening. A node is found down when a doubt (a session's PING, or a
// command, unanswered for AnswerWithin) is confirmed by the watcher's own
// PING, on another connection, unanswered for AnswerWithin; by two such
// windows when the doubt was not a silence (a lost connection says nothing
// of the server); or when a connection cannot be made (nothing listens).
// A redis-server starved of CPU on a loaded machine misses one window
// now and then, seldom two in a row on two connections.
//
// Renewal. While the breaker is open the watcher keeps a PING unanswered
// on its line and reads in windows of ProbeEvery: each empty window
// renews the evidence, so a reader finds it within StaleLease and is
// served at once, the copies of a hung node included. A refused
// connection renews it too, dated when the dial began.
//
// Closing. The first answer to a PING within AnswerWithin of its writing
// closes the breaker: the node runs again. A later one counts as an
// answer (Answering: the node is slow, not silent) and no more.
//
// Where it does not hold. A node cut off from this process alone (a
// partition) is silent here and takes other clients' writes meanwhile:
// its copies are then knowingly stale, served by stale_reads and bounded
// by refresh_failures.

// watch runs the watcher until the node's doubts are cleared with the
// breaker closed, or the breaker's context ends. One runs at a time
// (watching), on a goroutine of the hub's.
func (b *Breaker) watch() {
	for {
		w := watcher{b: b}
		w.run()
		b.watching.Store(false)
		// A doubt raised, or the breaker opened, as it ended: watch again.
		if b.ctx.Err() != nil || !b.needsWatch() || !b.watching.CompareAndSwap(false, true) {
			return
		}
	}
}

// needsWatch reports whether the node is down or in doubt.
func (b *Breaker) needsWatch() bool {
	return b.down.Load() || b.cleared.Load() < b.doubts.Load()
}

// watcher is one run of the watch: the PINGs it wrote and has not heard
// answered, oldest first. Only its goroutine uses it, and the Breaker's
// seq.
type watcher struct {
	b     *Breaker
	out   [MaxOut]sentPing
	n     int
	wrote time.Time // when the last PING was written, for pacing
	// broken counts the line's failures in a row: a connection that
	// breaks twice in a row is as good as one that cannot be made.
	broken int
}

// sentPing is a PING written and not answered yet.
type sentPing struct {
	seq   uint64
	wrote time.Time // when its write returned: the wall's monotonic clock, for windows
	at    time.Time // the same moment on the Config's clock, for dates
	doubt uint64    // the doubts raised before it was written
}

// run watches until the node's doubts are cleared with the breaker
// closed, or the breaker's context ends.
func (w *watcher) run() {
	b := w.b
	for b.ctx.Err() == nil && b.needsWatch() {
		if w.n < MaxOut && time.Since(w.wrote) >= ProbeEvery && !w.ping() {
			continue
		}
		w.read()
	}
}

// ping writes the next PING, and reports whether it could: a line that
// failed was judged (failed) and waited on for ProbeEvery.
func (w *watcher) ping() bool {
	b := w.b
	b.seq++
	tried, doubt := b.cfg.Now(), b.doubts.Load()
	if err := b.line.Ping(b.ctx, strconv.FormatUint(b.seq, 10)); err != nil {
		w.failed(err, tried)
		return false
	}
	w.wrote = time.Now()
	w.out[w.n] = sentPing{seq: b.seq, wrote: w.wrote, at: b.cfg.Now(), doubt: doubt}
	w.n++
	return true
}

// read waits ProbeEvery for an answer, and judges what came, or that
// nothing did.
func (w *watcher) read() {
	b := w.b
	asked, began := b.cfg.Now(), time.Now()
	msg, err := b.line.ReceiveTimeout(b.ctx, ProbeEvery)
	var ne net.Error
	var rerr redis.Error
	switch {
	case b.ctx.Err() != nil:
	case errors.As(err, &ne) && ne.Timeout():
		w.quiet(asked, began.Add(ProbeEvery))
	case errors.As(err, &rerr):
		p, ok := w.oldest()
		w.answered(p, ok, err)
	case err != nil:
		w.failed(err, asked)
	default:
		if pong, ok := msg.(*redis.Pong); ok {
			if seq, perr := strconv.ParseUint(pong.Payload, 10, 64); perr == nil {
				p, ok := w.upTo(seq)
				w.answered(p, ok, nil)
			}
		}
	}
}

// quiet takes a read that found nothing by deadline (the wall's), asked
// at asked (the Config's clock): the oldest PING unanswered for long
// enough (see the rules above) is evidence that the node does not answer,
// dated by the read's end on the Config's clock.
func (w *watcher) quiet(asked, deadline time.Time) {
	b := w.b
	if w.n == 0 {
		return
	}
	need := AnswerWithin
	if !b.down.Load() && !b.silent.Load() {
		need = 2 * AnswerWithin
	}
	waited := deadline.Sub(w.out[0].wrote)
	if waited < need {
		return
	}
	if d, ok := b.line.(Drainer); ok && !d.Drained() {
		return // answers wait unread: the next read takes them
	}
	until := asked.Add(ProbeEvery)
	if now := b.cfg.Now(); until.After(now) {
		until = now // a Clock that does not move with the wall, in tests
	}
	b.Judge(NoAnswer{Waited: waited}, until)
}

// answered takes the node's answer to p (ok false: no PING of this run's),
// err when it answered with an error: one that says it cannot serve
// (LOADING, BUSY, MASTERDOWN) is evidence dated when p was written; any
// other answer within AnswerWithin closes the breaker and clears the
// doubts raised before p was written, and a later one says the node is
// slow.
func (w *watcher) answered(p sentPing, ok bool, err error) {
	b := w.b
	if !ok {
		return
	}
	w.broken = 0
	if ConnectionFailure(err) {
		b.Judge(err, p.at)
		return
	}
	if time.Since(p.wrote) >= AnswerWithin {
		b.Answered(b.cfg.Now(), true)
		return
	}
	for {
		c := b.cleared.Load()
		if p.doubt <= c || b.cleared.CompareAndSwap(c, p.doubt) {
			break
		}
	}
	b.Judge(nil, b.cfg.Now())
}

// failed takes a line that could not be used, tried at tried: a
// connection refused (nothing listens), or a line that failed twice in a
// row, is evidence that the node is down from then. A dial that timed
// out once is not: Go reports a timeout, without looking, for a
// connection the kernel made while the dialling goroutine waited past its
// deadline for the scheduler, as it does for a read (see Socket). Either
// way the PINGs written on it are lost, and the line is tried again
// ProbeEvery later.
func (w *watcher) failed(err error, tried time.Time) {
	b := w.b
	w.n = 0
	if b.ctx.Err() != nil {
		return
	}
	if w.broken++; Refused(err) || w.broken >= 2 {
		if Refused(err) {
			b.refused.Store(b.answers.Load() + 1)
		}
		b.Judge(err, tried)
	}
	t := time.NewTimer(ProbeEvery)
	defer t.Stop()
	select {
	case <-b.ctx.Done():
	case <-t.C:
	}
}

// oldest removes and returns the oldest PING unanswered, which an error
// reply answers.
func (w *watcher) oldest() (sentPing, bool) {
	if w.n == 0 {
		return sentPing{}, false
	}
	p := w.out[0]
	w.n = copy(w.out[:], w.out[1:w.n])
	return p, true
}

// upTo removes the PINGs up to seq, answered in order, and returns the
// one seq answers: not found when it is none of this run's.
func (w *watcher) upTo(seq uint64) (sentPing, bool) {
	i := 0
	for i < w.n && w.out[i].seq <= seq {
		i++
	}
	if i == 0 || w.out[i-1].seq != seq {
		return sentPing{}, false
	}
	p := w.out[i-1]
	w.n = copy(w.out[:], w.out[i:w.n])
	return p, true
}
