package track

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"
)

// keepFixture is a session's keepingUp with what it reports to: a node,
// a manual Clock, and the verdicts heard (nil: the node answers).
type keepFixture struct {
	k        keepingUp
	clock    *fakeclock.Clock
	n        *Node
	verdicts []error
	at       []time.Time
}

// arm hands the keepingUp its voucher, as the listener does once the
// session is live.
func (f *keepFixture) arm() {
	f.k.v = &voucher{now: f.clock.Now, stamps: NewStamps(f.clock.Now), n: f.n, heard: func(err error, at time.Time) {
		f.verdicts = append(f.verdicts, err)
		f.at = append(f.at, at)
	}}
}

// outstanding returns the stamps of the PINGs sent and not answered.
func (f *keepFixture) outstanding() []int64 { return slices.Clone(f.k.out[:f.k.n]) }

// send records PINGs as sent, stamped ago before the Clock's now.
func (f *keepFixture) send(ago ...time.Duration) {
	for _, d := range ago {
		f.k.out[f.k.n] = f.clock.Now().Add(-d).UnixNano()
		f.k.n++
	}
}

// stamp is the payload of the answer to a PING sent ago before now.
func (f *keepFixture) stamp(ago time.Duration) string {
	return strconv.FormatInt(f.clock.Now().Add(-ago).UnixNano(), 10)
}

// TestASessionsPingsVouchForItsNodeAndTellWhetherItAnswers is keepingUp's
// specification, a rule a row. Its PINGs are what lets a copy be served
// from memory (an answered stamp vouches that every invalidation sent
// before it was handled) and what tells a node that hangs from one that
// answers: a PING sent too often, an answer taken for the wrong stamp, or
// a late answer counted as timely would serve copies nobody vouches for,
// or leave open a breaker on a node that answers.
func TestASessionsPingsVouchForItsNodeAndTellWhetherItAnswers(t *testing.T) {
	srv := redistest.Start(t)
	ps := srv.Client(t).Subscribe(t.Context())
	t.Cleanup(func() { ps.Close() })
	const prior = 42 // the vouched stamp before the row acts
	unread := unreadSocket(t)
	rows := []struct {
		rule  string
		armed bool
		setup func(f *keepFixture)
		act   func(t *testing.T, f *keepFixture)
		check func(t *testing.T, f *keepFixture)
	}{
		// ping
		{
			rule: "an unarmed session sends no PING: nothing would take its answer",
			act:  func(t *testing.T, f *keepFixture) { f.ping(t, ps) },
			check: func(t *testing.T, f *keepFixture) {
				if f.k.n != 0 {
					t.Fatalf("%d PINGs outstanding, want none", f.k.n)
				}
			},
		},
		{
			rule:  "an armed session PINGs once VouchEvery has passed since the last, stamped by the Clock",
			armed: true,
			act:   func(t *testing.T, f *keepFixture) { f.ping(t, ps) },
			check: func(t *testing.T, f *keepFixture) {
				if got, want := f.outstanding(), []int64{f.clock.Now().UnixNano()}; !slices.Equal(got, want) {
					t.Fatalf("outstanding %v, want %v", got, want)
				}
			},
		},
		{
			// The promise, not VouchEvery: a copy is served within 50 ms
			// of the last answered PING's stamp, and an answer may come
			// 10 ms late, so the next PING is due 40 ms after the last.
			rule:  "an armed session PINGs 40 ms after the last: an answer up to 10 ms late keeps its copies within the 50 ms vouch",
			armed: true,
			setup: func(f *keepFixture) { f.k.pinged = time.Now().Add(-(50 - 10) * time.Millisecond) },
			act:   func(t *testing.T, f *keepFixture) { f.ping(t, ps) },
			check: func(t *testing.T, f *keepFixture) {
				if f.k.n != 1 {
					t.Fatalf("%d PINGs outstanding 40 ms after the last, want 1", f.k.n)
				}
			},
		},
		{
			rule:  "no PING while no copy of the node's keys is kept: there is nothing to vouch for",
			armed: true,
			setup: func(f *keepFixture) { f.n.holding.Store(false) },
			act:   func(t *testing.T, f *keepFixture) { f.ping(t, ps) },
			check: func(t *testing.T, f *keepFixture) {
				if f.k.n != 0 {
					t.Fatalf("%d PINGs outstanding, want none", f.k.n)
				}
			},
		},
		{
			rule:  "no PING within VouchEvery of the last",
			armed: true,
			// Dated ahead, so that no slow machine can age it past VouchEvery.
			setup: func(f *keepFixture) { f.k.pinged = time.Now().Add(time.Hour) },
			act:   func(t *testing.T, f *keepFixture) { f.ping(t, ps) },
			check: func(t *testing.T, f *keepFixture) {
				if f.k.n != 0 {
					t.Fatalf("%d PINGs outstanding, want none", f.k.n)
				}
			},
		},
		{
			rule:  "no PING while maxOut are unanswered: a frozen server reads none of them",
			armed: true,
			setup: func(f *keepFixture) {
				for range maxOut {
					f.send(time.Second)
				}
			},
			act: func(t *testing.T, f *keepFixture) { f.ping(t, ps) },
			check: func(t *testing.T, f *keepFixture) {
				if f.k.n != maxOut {
					t.Fatalf("%d PINGs outstanding, want maxOut (%d)", f.k.n, maxOut)
				}
			},
		},
		{
			rule:  "a session between PINGs reads in windows of readEvery",
			armed: true,
			setup: func(f *keepFixture) { f.k.pinged = time.Now().Add(time.Hour) },
			check: func(t *testing.T, f *keepFixture) {
				if d := f.k.window(); d != readEvery {
					t.Fatalf("window %v, want readEvery (%v)", d, readEvery)
				}
			},
		},
		{
			rule:  "a read ends when the next PING is due, not a window later",
			armed: true,
			setup: func(f *keepFixture) { f.k.pinged = time.Now().Add(-VouchEvery) },
			check: func(t *testing.T, f *keepFixture) {
				if d := f.k.window(); d > time.Millisecond {
					t.Fatalf("window %v with a PING due, want at most 1ms", d)
				}
			},
		},
		// pong
		{
			rule:  "an unarmed session takes no answer",
			setup: func(f *keepFixture) { f.send(time.Millisecond) },
			act:   func(t *testing.T, f *keepFixture) { f.k.pong(f.stamp(time.Millisecond)) },
			check: func(t *testing.T, f *keepFixture) {
				if v := f.n.Vouched(); v != prior || f.n.Answers() != 0 || f.k.n != 1 {
					t.Fatalf("vouched %d, answers %d, outstanding %d; want %d, 0, 1", v, f.n.Answers(), f.k.n, prior)
				}
			},
		},
		{
			rule:  "the answer to a PING vouches for the node up to its stamp, and counts as heard from it",
			armed: true,
			setup: func(f *keepFixture) { f.send(time.Millisecond) },
			act:   func(t *testing.T, f *keepFixture) { f.k.pong(f.stamp(time.Millisecond)) },
			check: func(t *testing.T, f *keepFixture) {
				want := f.clock.Now().Add(-time.Millisecond).UnixNano()
				if v := f.n.Vouched(); v != want || f.n.Answers() != 1 || f.k.n != 0 {
					t.Fatalf("vouched %d, answers %d, outstanding %d; want %d, 1, 0", v, f.n.Answers(), f.k.n, want)
				}
			},
		},
		{
			rule:  "an answer that carries no stamp of ours (go-redis's own PING) vouches for nothing",
			armed: true,
			setup: func(f *keepFixture) { f.send(time.Millisecond) },
			act:   func(t *testing.T, f *keepFixture) { f.k.pong("") },
			check: func(t *testing.T, f *keepFixture) {
				if v := f.n.Vouched(); v != prior || f.n.Answers() != 0 || f.k.n != 1 || len(f.verdicts) != 0 {
					t.Fatalf("vouched %d, answers %d, outstanding %d, verdicts %v; want %d, 0, 1, none", v, f.n.Answers(), f.k.n, f.verdicts, prior)
				}
			},
		},
		{
			rule:  "an answer takes its PING and every older one out of the unanswered; the later stay",
			armed: true,
			setup: func(f *keepFixture) { f.send(3*time.Millisecond, 2*time.Millisecond, time.Millisecond) },
			act:   func(t *testing.T, f *keepFixture) { f.k.pong(f.stamp(2 * time.Millisecond)) },
			check: func(t *testing.T, f *keepFixture) {
				if got, want := f.outstanding(), []int64{f.clock.Now().Add(-time.Millisecond).UnixNano()}; !slices.Equal(got, want) {
					t.Fatalf("outstanding %v, want %v", got, want)
				}
			},
		},
		{
			rule:  "an answer within AnswerWithin of its PING says the node answers, as of now",
			armed: true,
			setup: func(f *keepFixture) { f.send(breaker.AnswerWithin - time.Nanosecond) },
			act: func(t *testing.T, f *keepFixture) {
				f.k.pong(f.stamp(breaker.AnswerWithin - time.Nanosecond))
			},
			check: func(t *testing.T, f *keepFixture) {
				if len(f.verdicts) != 1 || f.verdicts[0] != nil || !f.at[0].Equal(f.clock.Now()) {
					t.Fatalf("verdicts %v at %v, want one: answers, at %v", f.verdicts, f.at, f.clock.Now())
				}
			},
		},
		{
			rule:  "an answer AnswerWithin or more after its PING still vouches, but says nothing of whether the node answers",
			armed: true,
			setup: func(f *keepFixture) { f.send(breaker.AnswerWithin) },
			act:   func(t *testing.T, f *keepFixture) { f.k.pong(f.stamp(breaker.AnswerWithin)) },
			check: func(t *testing.T, f *keepFixture) {
				want := f.clock.Now().Add(-breaker.AnswerWithin).UnixNano()
				if v := f.n.Vouched(); v != want || len(f.verdicts) != 0 {
					t.Fatalf("vouched %d, verdicts %v; want %d, none", v, f.verdicts, want)
				}
			},
		},
		// quiet
		{
			rule:  "an unarmed session reaches no verdict",
			setup: func(f *keepFixture) { f.send(time.Hour) },
			act:   func(t *testing.T, f *keepFixture) { f.k.quiet(f.clock.Now()) },
			check: func(t *testing.T, f *keepFixture) {}, // and does not panic
		},
		{
			rule:  "with every PING answered, quiet says nothing",
			armed: true,
			act:   func(t *testing.T, f *keepFixture) { f.k.quiet(f.clock.Now()) },
			check: func(t *testing.T, f *keepFixture) {
				if len(f.verdicts) != 0 {
					t.Fatalf("verdicts %v, want none", f.verdicts)
				}
			},
		},
		{
			rule:  "a PING unanswered for less than AnswerWithin is no verdict yet",
			armed: true,
			setup: func(f *keepFixture) { f.send(breaker.AnswerWithin - time.Nanosecond) },
			act:   func(t *testing.T, f *keepFixture) { f.k.quiet(f.clock.Now()) },
			check: func(t *testing.T, f *keepFixture) {
				if len(f.verdicts) != 0 {
					t.Fatalf("verdicts %v, want none", f.verdicts)
				}
			},
		},
		{
			rule:  "the oldest PING unanswered for AnswerWithin says the node does not answer, dated by the wait",
			armed: true,
			setup: func(f *keepFixture) { f.send(breaker.AnswerWithin+time.Millisecond, time.Millisecond) },
			act:   func(t *testing.T, f *keepFixture) { f.k.quiet(f.clock.Now().Add(-time.Millisecond)) },
			check: func(t *testing.T, f *keepFixture) {
				var na breaker.NoAnswer
				if len(f.verdicts) != 1 || !errors.As(f.verdicts[0], &na) || na.Waited != breaker.AnswerWithin || !f.at[0].Equal(f.clock.Now().Add(-time.Millisecond)) {
					t.Fatalf("verdicts %v at %v, want one: no answer for %v, at the wait's end %v", f.verdicts, f.at, breaker.AnswerWithin, f.clock.Now().Add(-time.Millisecond))
				}
			},
		},
		{
			rule:  "no verdict while the session's socket holds bytes unread: a read held up past its deadline did not look",
			armed: true,
			setup: func(f *keepFixture) {
				f.send(breaker.AnswerWithin + time.Millisecond)
				f.k.sock = unread
			},
			act: func(t *testing.T, f *keepFixture) { f.k.quiet(f.clock.Now()) },
			check: func(t *testing.T, f *keepFixture) {
				if len(f.verdicts) != 0 {
					t.Fatalf("verdicts %v, want none", f.verdicts)
				}
			},
		},
		{
			rule:  "a wait that ends after the Clock's now is dated now",
			armed: true,
			setup: func(f *keepFixture) { f.send(breaker.AnswerWithin) },
			act:   func(t *testing.T, f *keepFixture) { f.k.quiet(f.clock.Now().Add(time.Hour)) },
			check: func(t *testing.T, f *keepFixture) {
				var na breaker.NoAnswer
				if len(f.verdicts) != 1 || !errors.As(f.verdicts[0], &na) || na.Waited != breaker.AnswerWithin || !f.at[0].Equal(f.clock.Now()) {
					t.Fatalf("verdicts %v at %v, want one: no answer for %v, at %v", f.verdicts, f.at, breaker.AnswerWithin, f.clock.Now())
				}
			},
		},
	}
	for _, r := range rows {
		t.Run(r.rule, func(t *testing.T) {
			f := &keepFixture{clock: fakeclock.New(epoch), n: &Node{Breaker: breaker.New(t.Context(), "", nil, &breaker.Config{})}}
			f.n.vouched.Store(prior)
			f.n.holding.Store(true) // a copy of its keys is kept, unless the row says
			if r.armed {
				f.arm()
			}
			if r.setup != nil {
				r.setup(f)
			}
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panicked: %v", p)
					}
				}()
				if r.act != nil {
					r.act(t, f)
				}
			}()
			r.check(t, f)
		})
	}
}

// ping has f's keepingUp PING on ps.
func (f *keepFixture) ping(t *testing.T, ps *redis.PubSub) {
	if err := f.k.ping(t.Context(), ps); err != nil {
		t.Fatal(err)
	}
}
