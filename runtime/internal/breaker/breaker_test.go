package breaker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest/proxy"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// errUnavailable stands for the runtime's ErrUnavailable.
var errUnavailable = errors.New("Redis unavailable")

// fixture is a Breaker alone, with what a hub would give it: goroutines
// the test's end waits for, as the hub's close does.
type fixture struct {
	b *Breaker
	g group.Group // goroutines the test's end waits for
}

// newFixture returns the breaker of the node called name, which its
// watcher asks on line, on the clock now; it stops, and its goroutines
// are waited for, when t ends.
func newFixture(t *testing.T, name string, now func() time.Time, line Line) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{}
	cfg := &Config{Now: now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Spawn: f.g.Go, Unavailable: errUnavailable}
	f.b = New(ctx, name, line, cfg)
	t.Cleanup(func() {
		cancel()
		f.g.Close()
	})
	return f
}

// lineOf returns a line to srv, as the hub makes it: a subscription to
// nothing on a probe client, closed when t ends.
func lineOf(t *testing.T, srv *redistest.Server) *redis.PubSub {
	probe := redis.NewClient(ProbeOptions(&redis.Options{Addr: srv.Addr}))
	line := probe.Subscribe(context.Background())
	t.Cleanup(func() { line.Close(); probe.Close() })
	return line
}

// heldLine is a line whose PINGs are held until release is closed, then
// fail with err: a watcher whose verdict the test decides, and when.
type heldLine struct {
	pinging chan struct{} // closed at the first PING
	once    sync.Once
	release chan struct{}
	err     error
}

func newHeldLine(err error) *heldLine {
	return &heldLine{pinging: make(chan struct{}), release: make(chan struct{}), err: err}
}

func (l *heldLine) Ping(ctx context.Context, _ ...string) error {
	l.once.Do(func() { close(l.pinging) })
	select {
	case <-l.release:
		return l.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *heldLine) ReceiveTimeout(ctx context.Context, d time.Duration) (any, error) {
	return nil, errors.New("test: a held line reads nothing")
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.WaitFor(t, what, cond)
}

// A breaker alone against a real redis-server: a command that fails on
// the killed server has the node pinged, and the failed ping opens the
// breaker, so the calls after it are refused at once with an error that
// wraps the runtime's sentinel, names the node and says what was last
// seen of it. Once the server is back, the probe closes the breaker
// within a few pings.
func TestABreakerOpensOnAKilledServerAndClosesWhenItAnswersAgain(t *testing.T) {
	srv := redistest.Start(t)
	f := newFixture(t, srv.Addr, time.Now, lineOf(t, srv))
	b := f.b
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if b.Down(ctx) || b.Unreachable() {
		t.Fatal("the breaker of a node that answers is open")
	}

	srv.Kill()
	err := rdb.Get(ctx, "k").Err()
	if !ConnectionFailure(err) {
		t.Fatalf("a GET of a killed server failed with %v, not a connection failure", err)
	}
	b.Failed(ctx, err) // waits for the verdict
	if !b.Unreachable() || b.UnreachableSince().IsZero() {
		t.Fatal("the breaker is closed after a command and a ping failed on a killed server")
	}
	select {
	case <-b.WhenOpened():
	default:
		t.Fatal("WhenOpened is not closed with the breaker open")
	}
	if !b.Down(ctx) {
		t.Fatal("a killed server's node is not down")
	}
	refused := b.Unavailable()
	if !errors.Is(refused, errUnavailable) || !strings.Contains(refused.Error(), srv.Addr) || !strings.Contains(refused.Error(), "(last error: ") || !strings.Contains(refused.Error(), "connection refused") {
		t.Fatalf("refused with %q: want the sentinel, the node's address and what it last said", refused)
	}
	if ConnectionFailure(refused) {
		t.Fatal("a refusal counts as a connection failure: an open breaker would keep itself open")
	}

	srv.Restart(t)
	waitFor(t, "the probe to close the breaker", func() bool { return !b.Unreachable() })
	if !b.UnreachableSince().IsZero() || b.Down(ctx) || !b.Answering(time.Now()) {
		t.Fatalf("after the node answered again: down since %v, down %v, answering %v", b.UnreachableSince(), b.Down(ctx), b.Answering(time.Now()))
	}
}

// A session's report that a frozen server left its PING unanswered opens
// the breaker once the node's own pings go unanswered too, and the probe
// closes it once the server thaws.
func TestASilenceConfirmedByPingsOpensTheBreaker(t *testing.T) {
	srv := redistest.Start(t)
	f := newFixture(t, srv.Addr, time.Now, lineOf(t, srv))
	b := f.b
	srv.Hang(t)
	b.Heard(NoAnswer{Waited: AnswerWithin}, time.Now())
	waitFor(t, "the pings to confirm the silence", func() bool { return b.Unreachable() })
	srv.Thaw()
	waitFor(t, "the probe to close the breaker", func() bool { return !b.Unreachable() })
}

// One PING of a session left unanswered does not open the breaker by
// itself: the node is pinged, answers, and calls go on to Redis.
func TestOneUnansweredSessionPingOpensNoBreaker(t *testing.T) {
	srv := redistest.Start(t)
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	f := newFixture(t, srv.Addr, clock.Now, lineOf(t, srv))
	b := f.b
	b.Heard(NoAnswer{Waited: AnswerWithin}, clock.Now())
	waitFor(t, "the watcher to clear the doubt", func() bool { return !b.watching.Load() })
	if b.Unreachable() || b.Down(context.Background()) {
		t.Fatal("one unanswered session PING opened the breaker of a node that answers")
	}
}

// A reader that finds the evidence of an open breaker older than
// StaleLease waits for the watcher's next verdict, and no longer than its
// own context: whose context ends is told "not down", since told "down"
// it would be answered from a copy nobody vouches for when the node may
// well be answering; it fails on its context instead. The others are told
// the verdict when it comes.
func TestAReaderWhoseContextEndsIsNotToldDown(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	line := newHeldLine(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
	b := newFixture(t, "held", clock.Now, line).b
	b.Judge(errors.New("test: refused"), clock.Now())
	<-line.pinging
	clock.Advance(StaleLease)
	first := make(chan bool)
	go func() { first <- b.Down(context.Background()) }()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if b.Down(ended) {
		t.Fatal("a waiter whose context ended was told the node is down")
	}
	close(line.release)
	if !<-first {
		t.Fatal("a waiter told the node answers when its dial was refused")
	}
}

// advancingLine is a line whose first PING is refused after the clock
// moved on by a second, a watcher held up while it dialled, and whose
// next PINGs wait for the test's end.
type advancingLine struct {
	clock *fakeclock.Clock
	first *atomic.Bool
}

func (l advancingLine) Ping(ctx context.Context, _ ...string) error {
	if l.first.Swap(false) {
		l.clock.Advance(time.Second)
		return &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (advancingLine) ReceiveTimeout(context.Context, time.Duration) (any, error) {
	return nil, errors.New("test: not read")
}

// timeoutOnceLine is a line whose first PING fails as a dial that timed
// out, as Go reports one whose goroutine the scheduler held past its
// deadline while the kernel made the connection; then it is line.
type timeoutOnceLine struct {
	Line
	first *atomic.Bool
}

func (l timeoutOnceLine) Ping(ctx context.Context, payload ...string) error {
	if l.first.Swap(false) {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	}
	return l.Line.Ping(ctx, payload...)
}

// One dial that timed out is no evidence that the node is down: a node
// that answers the watcher's next PING has its breaker left closed, and
// calls go on to Redis.
func TestADialThatTimedOutOnceOpensNoBreaker(t *testing.T) {
	srv := redistest.Start(t)
	first := new(atomic.Bool)
	first.Store(true)
	b := newFixture(t, srv.Addr, time.Now, timeoutOnceLine{lineOf(t, srv), first}).b
	if b.Check(context.Background()) {
		t.Fatal("one dial that timed out opened the breaker of a node that answers")
	}
	if first.Load() {
		t.Fatal("the watcher never dialled")
	}
}

// A refusal is dated when the dial began, not when the watcher's
// goroutine got back to it (here a second later): the breaker is believed
// for StaleLease from then, and no longer. Dated late, a starved watcher
// would have copies served as stale reads longer after Redis answered
// again.
func TestARefusalSeenLateIsDatedWhenTheDialBegan(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	first := new(atomic.Bool)
	first.Store(true)
	b := newFixture(t, "late", clock.Now, advancingLine{clock, first}).b
	began := clock.Now()
	if !b.Check(context.Background()) {
		t.Fatal("a refused dial left the breaker closed")
	}
	if got := time.Unix(0, b.seen.Load()); !got.Equal(began) {
		t.Fatalf("the evidence is dated %v, want %v, when the dial began", got, began)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if b.Down(ended) {
		t.Fatal("a second after the refusal, the breaker is believed without a new verdict")
	}
}

// While the node stays silent, the watcher renews the open breaker's
// evidence by itself, a PING unanswered in each of its reads, so readers
// find it fresh without asking; when the node thaws, the first prompt
// answer closes the breaker.
func TestTheWatcherRenewsTheEvidenceOfAFrozenNode(t *testing.T) {
	srv := redistest.Start(t)
	b := newFixture(t, srv.Addr, time.Now, lineOf(t, srv)).b
	srv.Hang(t)
	if !b.Check(context.Background()) {
		t.Fatal("a frozen server's node is not found down")
	}
	first := b.seen.Load()
	waitFor(t, "the watcher to renew the evidence", func() bool { return b.seen.Load() > first })
	if !b.Silent(time.Now()) {
		t.Fatal("a frozen server's node is not silent")
	}
	srv.Thaw()
	waitFor(t, "the watcher to close the breaker", func() bool { return !b.Unreachable() })
}

// A node that answers late is down (its answers come past AnswerWithin)
// but not silent: its late answers count, so its copies are not served
// without asking it. A refused connection makes it silent at once,
// whatever it answered before, until it answers again.
func TestASlowNodeIsDownButNotSilent(t *testing.T) {
	srv := redistest.Start(t)
	p, err := proxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	probe := redis.NewClient(ProbeOptions(&redis.Options{Addr: p.Addr}))
	line := probe.Subscribe(context.Background())
	t.Cleanup(func() { line.Close(); probe.Close() })
	b := newFixture(t, p.Addr, time.Now, line).b
	if err := p.Slow(2 * AnswerWithin); err != nil {
		t.Fatal(err)
	}
	if !b.Check(context.Background()) {
		t.Fatal("a node answering 200 ms late is not found down")
	}
	answers := b.Answers()
	waitFor(t, "a late answer", func() bool { return b.Answers() > answers })
	if b.Silent(time.Now()) || !b.Unreachable() {
		t.Fatalf("a node answering late: silent %v, down %v; want not silent, down", b.Silent(time.Now()), b.Unreachable())
	}
	p.Close() // nothing listens at its address any more
	waitFor(t, "a refused connection", func() bool { return b.Silent(time.Now()) })
}

// A node is silent when it stopped answering: soon after a prompt answer,
// so that a hung node's copies are served within a PING's wait; only
// long after a late one, so that a path that slows down (from 100 to
// 300 ms, as the soak's latency fault does) is not taken for a hang while
// no answer is on time; at once after a refused connection. A node that
// answers at its PINGs' pace is never silent.
func TestWhenANodeIsSilent(t *testing.T) {
	for _, tc := range []struct {
		rule    string
		late    bool
		refused bool
		after   time.Duration
		silent  bool
	}{
		{"a node answering at its PINGs' pace is not silent", false, false, ProbeEvery, false},
		{"a prompt answer, then nothing for a PING's wait: silent", false, false, AnswerWithin, true},
		{"a late answer, then nothing for 300 ms: slow still", true, false, 300 * time.Millisecond, false},
		// README's slowest hot read after a kill: a copy written just
		// before waits up to 400 ms for its node, then is served.
		{"a late answer, then nothing for 400 ms: silent", true, false, 400 * time.Millisecond, true},
		{"a refused connection after an answer: silent at once", true, true, 0, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			b := newFixture(t, "node", clock.Now, newHeldLine(nil)).b
			b.Answered(clock.Now(), tc.late)
			if tc.refused {
				b.refused.Store(b.answers.Load() + 1)
			}
			clock.Advance(tc.after)
			if got := b.Silent(clock.Now()); got != tc.silent {
				t.Fatalf("Silent = %v, want %v", got, tc.silent)
			}
		})
	}
}

// A read waiting for a node to be found silent looks again at each
// verdict on it, an answer or evidence of none, and at nothing else:
// WhenJudged is closed by the next verdict, not by the one before.
func TestWhenJudgedIsClosedByTheNextVerdict(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	b := newFixture(t, "node", clock.Now, newHeldLine(nil)).b
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	for _, verdict := range []error{nil, errors.New("connection refused"), nil} {
		judged := b.WhenJudged()
		b.Answered(clock.Now(), true) // a late answer is no verdict
		if closed(judged) {
			t.Fatalf("closed before the verdict %v", verdict)
		}
		b.Judge(verdict, clock.Now())
		if !closed(judged) {
			t.Fatalf("still open after the verdict %v", verdict)
		}
	}
}

// What a session or a command reports of the node, and what the breaker
// makes of it: an answer counts, and closes an open breaker; a silence
// renews an open breaker's evidence but only raises a doubt about a
// closed one's node; a doubt about a node already down keeps the error
// that opened it, the one a refused read's caller is told.
func TestWhatTheBreakerMakesOfAReport(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	silence := NoAnswer{Waited: AnswerWithin}
	for _, tc := range []struct {
		rule   string
		open   bool                            // the breaker was opened by refused first
		report func(b *Breaker, now time.Time) // 20 ms after it opened
		check  func(t *testing.T, b *Breaker, ended context.Context)
	}{
		{"a session's answer counts as an answer", false,
			func(b *Breaker, now time.Time) { b.Heard(nil, now) },
			func(t *testing.T, b *Breaker, _ context.Context) {
				if b.Answers() != 1 || b.Unreachable() {
					t.Fatalf("answers %d, down %v; want 1, closed", b.Answers(), b.Unreachable())
				}
			}},
		{"a session's answer closes an open breaker", true,
			func(b *Breaker, now time.Time) { b.Heard(nil, now) },
			func(t *testing.T, b *Breaker, _ context.Context) {
				if b.Unreachable() {
					t.Fatal("the breaker is open after the node answered")
				}
			}},
		{"a session's silence renews an open breaker's evidence", true,
			func(b *Breaker, now time.Time) { b.Heard(silence, now) },
			func(t *testing.T, b *Breaker, ended context.Context) {
				if !b.Down(ended) {
					t.Fatal("the breaker is not believed 10 ms after a silence renewed it")
				}
			}},
		{"a session's silence only raises a doubt about a closed breaker", false,
			func(b *Breaker, now time.Time) { b.Heard(silence, now) },
			func(t *testing.T, b *Breaker, _ context.Context) {
				if b.Unreachable() || !b.watching.Load() {
					t.Fatalf("down %v, watcher running %v; want closed, running", b.Unreachable(), b.watching.Load())
				}
			}},
		{"a doubt about a node already down keeps the error that opened it", true,
			func(b *Breaker, _ time.Time) { b.Suspect(silence) },
			func(t *testing.T, b *Breaker, _ context.Context) {
				if got := b.Unavailable().Error(); !strings.Contains(got, "connection refused") {
					t.Fatalf("a refused read is told %q, not the refusal that opened the breaker", got)
				}
			}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			b := newFixture(t, "node", clock.Now, newHeldLine(nil)).b
			if tc.open {
				b.Judge(refused, clock.Now())
			}
			clock.Advance(20 * time.Millisecond)
			tc.report(b, clock.Now())
			clock.Advance(10 * time.Millisecond) // past the opening's lease, within the report's
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			tc.check(t, b, ended)
		})
	}
}

// heldUpLine is a line on a real connection whose reads come back after
// their deadline, found nothing, for a while: what a goroutine the
// scheduler held up past its read's deadline is told (Go checks the
// deadline before the socket), while the node's answers wait in the
// socket. Its socket says so (Drained).
type heldUpLine struct {
	*redis.PubSub
	sock  *Socket
	until time.Time // reads are held up until then
}

func (l *heldUpLine) ReceiveTimeout(ctx context.Context, d time.Duration) (any, error) {
	if time.Now().Before(l.until) {
		time.Sleep(d)
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: errHeldUp{}}
	}
	return l.PubSub.ReceiveTimeout(ctx, d)
}

func (l *heldUpLine) Drained() bool { return l.sock.Drained() }

type errHeldUp struct{}

func (errHeldUp) Error() string { return "i/o timeout" }
func (errHeldUp) Timeout() bool { return true }

// A watcher held up past its reads' deadlines does not take them for
// silence while the node's answers wait unread in its socket: the
// breaker of a node that answers stays closed, and the doubt is cleared
// once the watcher reads the answers. Trusting the timeouts, it opened on
// a healthy Redis, and a soak on two overloaded cores served copies
// 60-270 ms stale from it.
func TestAHeldUpWatcherTakesNoUnreadAnswerForSilence(t *testing.T) {
	srv := redistest.Start(t)
	opts, sock := ProbeOptions(&redis.Options{Addr: srv.Addr}), new(Socket)
	opts.Dialer = sock.Dialer(opts.Dialer)
	probe := redis.NewClient(opts)
	line := &heldUpLine{PubSub: probe.Subscribe(context.Background()), sock: sock, until: time.Now().Add(4 * AnswerWithin)}
	t.Cleanup(func() { line.Close(); probe.Close() })
	b := newFixture(t, srv.Addr, time.Now, line).b
	if b.Check(context.Background()) {
		t.Fatal("the breaker opened on a node whose answers waited unread")
	}
	if time.Now().Before(line.until) {
		t.Fatal("the doubt was settled before the watcher could read an answer")
	}
}

// deafLine is a line to a node that reads its PINGs and never answers:
// each read waits its timeout and finds nothing. It records when each
// PING was written.
type deafLine struct {
	mu    sync.Mutex
	pings []time.Time
}

func (l *deafLine) Ping(context.Context, ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pings = append(l.pings, time.Now())
	return nil
}

func (l *deafLine) ReceiveTimeout(ctx context.Context, d time.Duration) (any, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: errHeldUp{}}
	}
}

func (l *deafLine) written() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.pings)
}

// How long a watcher waits on a node that reads its PINGs and never
// answers before it opens the breaker: AnswerWithin after its first PING
// when the doubt was itself a silence (a session's PING unanswered), twice
// that when it was not (a lost connection says nothing of the server).
// Judged by the PINGs' own times and count, not the wall's: a slower
// machine opens later, never sooner, and writes no more PINGs first (one
// per read, each read a window of ProbeEvery at least).
func TestHowLongAWatcherWaitsBeforeItOpens(t *testing.T) {
	for _, tc := range []struct {
		rule  string
		doubt func(b *Breaker)
		wait  time.Duration
	}{
		{"a silence, confirmed by the watcher's own PING unanswered AnswerWithin", func(b *Breaker) { b.Heard(NoAnswer{Waited: AnswerWithin}, time.Now()) }, AnswerWithin},
		{"a lost connection, by two windows of AnswerWithin", func(b *Breaker) { b.Suspect(errors.New("test: the connection was lost")) }, 2 * AnswerWithin},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			line := &deafLine{}
			b := newFixture(t, "deaf", time.Now, line).b
			tc.doubt(b)
			<-b.WhenOpened()
			opened, pings := time.Now(), line.written()
			if waited := opened.Sub(pings[0]); waited < tc.wait {
				t.Fatalf("the breaker opened %v after the first PING, want at least %v", waited, tc.wait)
			}
			if most := int(tc.wait/ProbeEvery) + 4; len(pings) > most {
				t.Fatalf("the breaker opened after %d PINGs, want at most %d: it waited longer than %v", len(pings), most, tc.wait)
			}
		})
	}
}

// A watcher writes a PING every ProbeEvery and no faster, and leaves at
// most MaxOut unanswered: a frozen server, which reads none of them,
// holds a few hundred bytes of them.
func TestAWatcherPacesItsPINGsAndStopsAtMaxOut(t *testing.T) {
	line := &deafLine{}
	b := newFixture(t, "deaf", time.Now, line).b
	b.Judge(errors.New("test: refused"), time.Now()) // the watcher runs while the breaker is open
	waitFor(t, "MaxOut PINGs", func() bool { return len(line.written()) >= MaxOut })
	pings := line.written()
	for i := 1; i < len(pings); i++ {
		if gap := pings[i].Sub(pings[i-1]); gap < ProbeEvery {
			t.Fatalf("PINGs %d and %d written %v apart, want at least ProbeEvery (%v)", i-1, i, gap, ProbeEvery)
		}
	}
	// Ten more windows: no PING beyond MaxOut.
	for range 10 {
		time.Sleep(ProbeEvery) // a poll: the count may only stay
	}
	if n := len(line.written()); n != MaxOut {
		t.Fatalf("%d PINGs unanswered, want MaxOut (%d)", n, MaxOut)
	}
}
