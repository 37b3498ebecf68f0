package track

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// Vouching timing: a session PINGs every VouchEvery, and the freshness
// protocol serves a copy locally only within the 50 ms bound of the stamp
// of the last answered PING (Node.Vouched), so an answer may come up to
// 10 ms after the next PING's and the copies stay served. 25 PINGs a
// second is what each instance holding copies costs each node it holds
// them on. Between PINGs the session reads in windows of readEvery: a
// read costs the node nothing, and a PING left unanswered is seen within
// one of them of AnswerWithin.
const (
	VouchEvery = 40 * time.Millisecond
	readEvery  = breaker.ProbeEvery
)

// voucher is what a session needs to vouch for its node: the clock that
// dates its PINGs and the stamps they carry (see Stamps), the node the
// answers vouch for, and heard, which
// takes the session's verdict on whether the node answers (nil) or not,
// reached at now (the node's Breaker.Heard).
type voucher struct {
	now    func() time.Time
	stamps Stamps
	n      *Node
	heard  func(err error, now time.Time)
	// tracked takes the keys a keyed session's node confirmed it tracks
	// (Store.Tracked); nil for Pub/Sub's. redirected says the node sent
	// a key elsewhere (MOVED, ASK): on a cluster, the slot has moved.
	tracked    func(keys []string)
	redirected func()
}

// keepingUp paces a session's stamped PINGs, which vouch for its node,
// and tells from their answers whether the node answers at all. Only the
// session's goroutine uses it.
type keepingUp struct {
	v      *voucher        // nil until the session is armed
	sock   *breaker.Socket // the session's connection, if it records it
	pinged time.Time       // when the last PING was sent, for pacing
	// out holds the stamps of the PINGs sent and not answered yet, oldest
	// first; a node that stopped answering has at most maxOut of them.
	out [maxOut]int64
	n   int
}

// maxOut is how many PINGs a session leaves unanswered before it stops
// sending more (breaker.MaxOut).
const maxOut = breaker.MaxOut

// pinger is a session's connection: a subscription, or a keyed
// session's own.
type pinger interface {
	Ping(ctx context.Context, payload ...string) error
}

// ping sends a stamped PING on ps when VouchEvery has passed since the
// last, while a copy of the node's keys is kept (Node.Holding). A
// half-open connection is noticed the same way: the answers stop, and
// with them the vouching.
func (k *keepingUp) ping(ctx context.Context, ps pinger) error {
	if k.v == nil || !k.v.n.holding.Load() || time.Since(k.pinged) < VouchEvery || k.n == maxOut {
		return nil
	}
	k.pinged = time.Now()
	stamp := k.v.stamps.Of(k.v.now())
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
func (k *keepingUp) pong(payload string) {
	if k.v == nil {
		return
	}
	stamp, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		return // not ours
	}
	now := k.v.now()
	prompt := k.v.stamps.Of(now)-stamp < int64(breaker.AnswerWithin)
	k.v.n.vouch(stamp, now, !prompt)
	i := 0
	for i < k.n && k.out[i] <= stamp {
		i++
	}
	k.n = copy(k.out[:], k.out[i:k.n])
	if prompt {
		k.v.heard(nil, now)
	}
}

// window returns how long the session's next read waits for Redis:
// readEvery, or less when the next PING is due sooner, so that PINGs go
// out every VouchEvery and not up to a window later.
func (k *keepingUp) window() time.Duration {
	if k.v == nil {
		return readEvery
	}
	return min(readEvery, max(VouchEvery-time.Since(k.pinged), time.Millisecond))
}

// asked returns when a wait for Redis's next message that begins now
// gives up (d, its window): the moment a quiet session knows nothing came
// until.
func (k *keepingUp) asked(d time.Duration) time.Time {
	if k.v == nil {
		return time.Time{}
	}
	return k.v.now().Add(d)
}

// quiet is called when the session read its connection dry and nothing
// came until the wait that began before (asked) gave up: a PING
// unanswered for breaker.AnswerWithin by then says the node does not
// answer, hung, paused, too busy or cut off, as a refused connection
// would, and its breaker opens or stays open. The verdict is dated by
// that wait, not by when the session's goroutine got back to it, and
// reached only once the session's socket is seen read dry after it (a
// read whose deadline passed before its goroutine got to the socket
// reports a timeout without looking; see breaker.Socket), so a session
// held up by the scheduler reaches it later, never wrongly: an answer
// that came meanwhile is read first on the next call.
func (k *keepingUp) quiet(until time.Time) {
	if k.v == nil || k.n == 0 {
		return
	}
	if now := k.v.now(); until.After(now) {
		until = now // a Clock that does not move with the wall, in tests
	}
	if waited := time.Duration(k.v.stamps.Of(until) - k.out[0]); waited >= breaker.AnswerWithin && k.sock.Drained() {
		k.v.heard(breaker.NoAnswer{Waited: waited}, until)
	}
}
