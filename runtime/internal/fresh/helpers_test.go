package fresh

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/Yiling-J/theine-go"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// The tests of this package run the protocol alone: no Redis, no hub, no
// session. A node's session is the test calling Started and Ended, its
// breaker's verdicts the test calling Answered and Judge, and time the
// fake clock, which moves only when a test advances it.

// epoch is where the tests' clock starts.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// errSilent is the failure a test opens a breaker with.
var errSilent = errors.New("test: the node does not answer")

// noLine is a breaker's line that never connects. No watcher ever uses
// it: the breakers of these tests spawn none (see newCopies).
type noLine struct{}

func (noLine) Ping(context.Context, ...string) error { return errSilent }
func (noLine) ReceiveTimeout(context.Context, time.Duration) (any, error) {
	return nil, errSilent
}

// env is a Copies of string keys and values on a fake clock, whose keys
// are all on one node (n) until a test moves them (move), and what the
// protocol asked of the runtime.
type env struct {
	t     *testing.T
	clock *fakeclock.Clock
	brk   *breaker.Config
	nodes *track.Nodes
	n     *track.Node // the node the keys are on at first
	c     *Copies[string, string]
	logs  *records // what the detector logged

	mu          sync.Mutex
	reloads     [][]string        // the keys of each Reload, in order
	reloadCtx   []context.Context // the context of each
	invalidated [][]string        // what OnInvalidate saw
}

// newCopies returns the protocol configured with p, on a node whose
// session has not started. A LocalTTL of 0 becomes an hour: theine's own
// clock is the wall clock, and no test waits for it.
func newCopies(t *testing.T, p Params) *env {
	t.Helper()
	e := &env{t: t, clock: fakeclock.New(epoch), logs: &records{}}
	// No watcher runs (Spawn refuses): a breaker's verdicts are the ones
	// the test gives it, and stay as they are.
	e.brk = &breaker.Config{Now: e.clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Spawn: func(func()) bool { return false }, Unavailable: errors.New("test: unavailable")}
	e.n = e.node("n1")
	e.nodes = &track.Nodes{One: e.n}
	local, err := theine.NewBuilder[string, *Copy[string]](1000).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(local.Close)
	if p.LocalTTL == 0 {
		p.LocalTTL = time.Hour
	}
	if p.OnInvalidate == nil {
		p.OnInvalidate = func(keys []string) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.invalidated = append(e.invalidated, keys)
		}
	}
	done, closeCache := context.WithCancel(context.Background())
	t.Cleanup(closeCache)
	e.c = &Copies[string, string]{
		Local:  local,
		Nodes:  e.nodes,
		Gens:   &Generations{Seed: maphash.MakeSeed()},
		Cfg:    p,
		Clock:  e.clock,
		Stamps: track.NewStamps(e.clock.Now),
		Clone:  func(v *string) *string { c := *v; return &c },
		Name:   func(k string) string { return k },
		Count:  &Counts{},
		Done:   done,
		Reload: func(ctx context.Context, es []*Entry[string]) {
			keys := []string{}
			for _, en := range es {
				keys = append(keys, en.Key)
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			e.reloads = append(e.reloads, keys)
			e.reloadCtx = append(e.reloadCtx, ctx)
		},
	}
	e.c.Det = NewDetector(Detection{
		// At 100 qps in slots of 100 ms, 10 reads in one slot make a key
		// hot at once (Observe).
		Recorder:     detect.Params{Window: time.Second, HotQPS: 100, WarmQPS: 50, RecorderSize: 100, InactiveAfter: time.Minute},
		Thresholds:   detect.Thresholds{Hot: 100, Warm: 50, TopN: 10},
		ClusterScale: 0.5,
		Clock:        e.clock,
		Log:          slog.New(e.logs),
	}, e.c.Name, e.c.Demote)
	return e
}

// node returns a node called name, on the env's clock, uncovered.
func (e *env) node(name string) *track.Node {
	return track.NewNode(e.t.Context(), name, e.clock.Now(), noLine{}, e.brk)
}

// after moves the clock on by d.
func (e *env) after(d time.Duration) { e.clock.Advance(d) }

// now is the stamp of the present.
func (e *env) now() int64 { return e.c.Stamps.Now() }

// start starts a session of n now: n is covered, and vouched for up to
// now (a session starts vouched up to its confirmation).
func (e *env) start(n *track.Node) { n.Started(e.clock.Now(), e.now()) }

// end ends n's session now.
func (e *env) end(n *track.Node) { n.Ended(e.clock.Now()) }

// move makes n the owner of every key: their slots moved to it.
func (e *env) move(n *track.Node) { e.nodes.One = n }

// hot promotes key and returns its entry.
func (e *env) hot(key string) *Entry[string] {
	e.t.Helper()
	d := e.c.Det
	d.Mu.Lock()
	d.ApplyLocked(detect.Decision[string]{Promote: []string{key}}, []detect.KeyRate[string]{{Key: key, Name: key}})
	d.Mu.Unlock()
	en := d.Lookup(key)
	if en == nil {
		e.t.Fatalf("%s was not promoted", key)
	}
	return en
}

// demote demotes key, as the selector does.
func (e *env) demote(key string) {
	d := e.c.Det
	d.Mu.Lock()
	defer d.Mu.Unlock()
	d.ApplyLocked(detect.Decision[string]{Demote: []string{key}}, nil)
}

// keep keeps v as key's copy, read under a token taken now, the key
// without a TTL; it reports whether Keep stored.
func (e *env) keep(key, v string) bool {
	e.t.Helper()
	return e.c.Keep(e.entry(key), e.c.Begin(key), &v, 0, len(v), 0)
}

// entry returns key's entry, hot.
func (e *env) entry(key string) *Entry[string] {
	e.t.Helper()
	en := e.c.Det.Lookup(key)
	if en == nil {
		e.t.Fatalf("%s is not hot", key)
	}
	return en
}

// copyOf returns the copy the local store holds for key, nil when none.
func (e *env) copyOf(key string) *Copy[string] {
	cp, ok := e.c.Local.Get(key)
	if !ok {
		return nil
	}
	return cp
}

// held returns the value the local store holds for key, and whether it
// holds one ("<nil>" for a row known to be absent).
func (e *env) held(key string) (string, bool) {
	cp := e.copyOf(key)
	switch {
	case cp == nil:
		return "", false
	case cp.Val == nil:
		return "<nil>", true
	}
	return *cp.Val, true
}

// fresh reports whether key's copy may be served without asking Redis;
// false when there is none.
func (e *env) fresh(key string) bool {
	cp := e.copyOf(key)
	return cp != nil && e.c.Fresh(&cp.Meta)
}

// servable reports what Servable says of key's copy; false, false when
// there is none. The breaker's verdict is taken as it stands: the
// context has ended, so a Down that would wait for a watcher's verdict
// (none runs) says "not down" at once.
func (e *env) servable(key string) (ok, stale bool) {
	cp := e.copyOf(key)
	if cp == nil {
		return false, false
	}
	return e.c.Servable(ended(), key, &cp.Meta)
}

// ended returns a context that has ended.
func ended() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// answered says n answered a PING now, promptly.
func (e *env) answered(n *track.Node) { n.Answered(e.clock.Now(), false) }

// open opens n's breaker now, or renews the evidence of an open one: n
// did not answer.
func (e *env) open(n *track.Node) { n.Judge(errSilent, e.clock.Now()) }

// gen returns key's generation.
func (e *env) gen(key string) uint64 { return e.c.Gens.Of(key).Load() }

// reloaded returns the keys of each Reload so far.
func (e *env) reloaded() [][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]string(nil), e.reloads...)
}

// keyed makes n's sessions keyed, as the start of a tracking session
// does, its Track recording the keys it is asked to track.
func keyed(t *testing.T, n *track.Node) *asked {
	t.Helper()
	a := &asked{}
	n.TrackedBy(func(keys []string) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.keys = append(a.keys, keys...)
	})
	return a
}

// asked is what a keyed session was asked to track.
type asked struct {
	mu   sync.Mutex
	keys []string
}

func (a *asked) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.keys...)
}

// records is a slog handler that keeps the messages logged, with their
// attributes.
type records struct {
	mu   sync.Mutex
	msgs []string
	attr []map[string]any
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	attrs := map[string]any{}
	rec.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.Any()
		return true
	})
	r.msgs = append(r.msgs, rec.Message)
	r.attr = append(r.attr, attrs)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// logged returns the messages logged so far, and their attributes.
func (r *records) logged() ([]string, []map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...), append([]map[string]any(nil), r.attr...)
}

// wakes counts the times n's session is wanted (Node.Want).
func wakes(t *testing.T, n *track.Node) *int {
	t.Helper()
	count := new(int)
	n.OnWant(func() { *count++ })
	return count
}

func ptr(s string) *string { return &s }

// holds fails t unless the store holds held at key ("" for nothing,
// "<nil>" for an absent row) and the copy is fresh as fresh says.
func (e *env) holds(t *testing.T, key, held string, fresh bool) {
	t.Helper()
	if got, _ := e.held(key); got != held {
		t.Errorf("the store holds %q, want %q", got, held)
	}
	if got := e.fresh(key); got != fresh {
		t.Errorf("Fresh = %v, want %v", got, fresh)
	}
}
