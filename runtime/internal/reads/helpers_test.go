package reads

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

var (
	errUnavailable = errors.New("Redis unavailable")
	errMissing     = errors.New("no such key")
	errClosed      = errors.New("cache closed")
)

// env is a Reader's test bench: a real redis-server, one node with its
// breaker in front of it, and the counts the Reader's callbacks keep.
type env struct {
	srv             *redistest.Server
	rdb             *redis.Client
	r               *Reader
	refused, counts atomic.Int64
	hook            *pipelines
	// hold replaces the node's line by one whose PINGs wait for the
	// test's end: a breaker the test opens stays open.
	hold func()
}

// heldLine is a line whose PINGs wait for their context's end.
type heldLine struct{}

func (heldLine) Ping(ctx context.Context, _ ...string) error {
	<-ctx.Done()
	return ctx.Err()
}

func (heldLine) ReceiveTimeout(ctx context.Context, _ time.Duration) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// newEnv returns a Reader of a String per key over a fresh server; ttl
// says whether it learns its keys' TTLs.
func newEnv(t *testing.T, ttl bool) *env {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var g group.Group
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); g.Close() })
	brk := &breaker.Config{Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Spawn: g.Go, Unavailable: errUnavailable}
	probe := redis.NewClient(breaker.ProbeOptions(&redis.Options{Addr: srv.Addr})) // pings within AnswerWithin
	line := probe.Subscribe(ctx)
	t.Cleanup(func() { line.Close(); probe.Close() })
	n := track.NewNode(ctx, srv.Addr, time.Now(), line, brk)
	e := &env{srv: srv, rdb: rdb, hook: &pipelines{}}
	e.hold = func() { e.r.Nodes = &track.Nodes{One: track.NewNode(ctx, srv.Addr, time.Now(), heldLine{}, brk)} }
	rdb.AddHook(e.hook)
	e.r = &Reader{
		Client: rdb, Store: layout.NewString(fakeclock.New(time.Now()), ttl), Nodes: &track.Nodes{One: n}, LearnsTTL: ttl, Now: time.Now,
		Refuse:  func(n *track.Node) error { e.refused.Add(1); return n.Unavailable() },
		Count:   func(ctx context.Context, err error) bool { e.counts.Add(1); return true },
		Missing: errMissing, Closed: errClosed,
	}
	return e
}

// newBatchEnv is newEnv for the batches a caller gives up: "k:1" is
// absent, "k:2" holds "v2", and the group the batches run on is closed
// after the server thaws, since a batch given up goes on until then.
func newBatchEnv(t *testing.T) (*env, *group.Group, []string) {
	t.Helper()
	e := newEnv(t, false)
	e.rdb.Set(context.Background(), "k:2", "v2", 0)
	g := new(group.Group)
	t.Cleanup(g.Close)
	return e, g, []string{"k:1", "k:2"}
}

// pipelines counts the pipelines sent and the commands in them, by name,
// but for those of a connection's handshake.
type pipelines struct {
	mu   sync.Mutex
	n    int
	cmds map[string]int
}

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.mu.Lock()
		sent := false
		for _, c := range cmds {
			if name := strings.ToLower(c.Name()); name != "client" && name != "hello" { // a connection's handshake
				if p.cmds == nil {
					p.cmds = map[string]int{}
				}
				p.cmds[name]++
				sent = true
			}
		}
		if sent {
			p.n++
		}
		p.mu.Unlock()
		return next(ctx, cmds)
	}
}

// take returns what was counted since the last take.
func (p *pipelines) take() (int, map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, cmds := p.n, p.cmds
	p.n, p.cmds = 0, nil
	return n, cmds
}
