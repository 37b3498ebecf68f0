package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	hk "github.com/hotkeygen/hotkeygen/runtime"
)

// A Scenario is what a fleet does while the node is measured.
type Scenario struct {
	ID   string
	Hold bool // every instance first holds a copy of each of heldIDs
	// Writes is what the writer, a client of its own apart from the
	// fleet, writes during the window: nothing, keys no instance holds
	// (item:1000000 on), or the keys the instances hold.
	Writes writeTarget
}

type writeTarget int

const (
	noWrites writeTarget = iota
	unheldWrites
	heldWrites
)

// scenarios are every scenario, in the order they run.
var scenarios = []Scenario{
	{ID: "idle-empty"},
	{ID: "idle-holding", Hold: true},
	{ID: "writes-unheld", Hold: true, Writes: unheldWrites},
	{ID: "writes-held", Hold: true, Writes: heldWrites},
}

// baselineScenario is the scenario whose figures the write scenarios'
// per-write figures are net of: the same fleet, holding, not written to.
const baselineScenario = "idle-holding"

func scenarioIDs() string {
	var ids []string
	for _, s := range scenarios {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ", ")
}

func pickScenarios(list string) ([]Scenario, error) {
	var out []Scenario
	for id := range strings.SplitSeq(list, ",") {
		id = strings.TrimSpace(id)
		i := slices.IndexFunc(scenarios, func(s Scenario) bool { return s.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("unknown scenario %q in -scenarios; the scenarios are %s", id, scenarioIDs())
		}
		out = append(out, scenarios[i])
	}
	return out, nil
}

// unheldBase and unheldKeys are the keys of the unheld writes: the same
// prefix as the held ones, so that a system tracking the prefix hears of
// them, and ids no instance reads.
const (
	unheldBase = 1_000_000
	unheldKeys = 100_000
)

// Config is what stays the same across every run of the bench.
type Config struct {
	Window        time.Duration `json:"window_ns"`
	Warmup        time.Duration `json:"warmup_ns"`
	Mode          string        `json:"mode"`
	Procs         int           `json:"procs"`
	WriteRate     float64       `json:"write_rate"`      // writes/s of writes-unheld
	HeldWriteRate float64       `json:"held_write_rate"` // writes/s of writes-held
	Payload       int           `json:"payload"`         // bytes of each written Item's Payload
}

// Bench measures fleets against one target.
type Bench struct {
	cfg    Config
	target Target
	nodes  []*Node
	writer *Writer
	// harness is each node's connected_clients with no fleet: the
	// bench's own connections (INFO, the writer's pool) and whatever
	// else uses the server.
	harness []int
}

// NewBench connects to every node of t and opens the writer's
// connections, so that they are counted once, in harness, and never in
// a fleet's.
func NewBench(ctx context.Context, cfg Config, t Target, maxN int) (*Bench, error) {
	b := &Bench{cfg: cfg, target: t, writer: newWriter(t, cfg.Payload)}
	for _, a := range t.Addrs {
		b.nodes = append(b.nodes, newNode(a))
	}
	want := max(10_000, 16*maxN+1_000)
	for _, n := range b.nodes {
		if err := n.ensureMaxClients(ctx, want); err != nil {
			b.Close()
			return nil, err
		}
	}
	if err := b.writer.open(ctx); err != nil {
		b.Close()
		return nil, err
	}
	time.Sleep(200 * time.Millisecond) // the pool's idle connections dial in the background
	for _, n := range b.nodes {
		s, err := n.Read(ctx)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.harness = append(b.harness, s.Clients)
	}
	return b, nil
}

func (b *Bench) Close() error {
	errs := []error{b.writer.Close()}
	for _, n := range b.nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

// Measurement is what one run of a fleet did at the node(s).
type Measurement struct {
	System   string
	Scenario string
	N        int
	Deltas   []Delta // per node, in Target.Addrs order
	// FleetConns is each node's connected_clients at the end of the
	// window, less its count just before the fleet started.
	FleetConns []int
	// HeldStart and HeldEnd are the copies the fleet held, summed over
	// its instances, before the warm-up and after the window.
	HeldStart, HeldEnd int
	// WritesAsked is the writer's rate, writes/s; 0 without writes.
	WritesAsked     float64
	WriterErrors    uint64
	WriterLastError string
}

// Run starts n instances of sys, takes them through sc and measures the
// nodes over the window. Each run has a fleet of its own: a fresh
// hotkeygen instance demotes its copies, once they are no longer read,
// at its first demotion pass, demote_every (60 s) after it started, and
// rueidis and go-redis CSC lose theirs for good to the first write of
// writes-held; a fleet kept from one scenario to the next would bring
// the last one's state into the next.
func (b *Bench) Run(ctx context.Context, sys systemInfo, sc Scenario, n int) (m *Measurement, err error) {
	pre, err := b.settle(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.writer.seed(ctx); err != nil {
		return nil, err
	}
	var fleet Fleet
	if b.cfg.Mode == "procs" {
		fleet, err = newProcFleet(ctx, sys, b.target, n, b.cfg.Procs)
	} else {
		fleet, err = newLocalFleet(ctx, sys, b.target, n)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := fleet.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: close: %w", sys.Name, cerr)
		}
	}()
	m = &Measurement{System: sys.Name, Scenario: sc.ID, N: n}
	if sc.Hold {
		if err := fleet.Hold(ctx); err != nil {
			return nil, err
		}
		if m.HeldStart, err = fleet.Held(ctx); err != nil {
			return nil, err
		}
	}
	var stop func() (uint64, error)
	switch sc.Writes {
	case unheldWrites:
		m.WritesAsked = b.cfg.WriteRate
		stop, err = b.writer.start(ctx, sys.Announced, m.WritesAsked, func(i int64) int64 { return unheldBase + i%unheldKeys })
	case heldWrites:
		m.WritesAsked = b.cfg.HeldWriteRate
		stop, err = b.writer.start(ctx, sys.Announced, m.WritesAsked, func(i int64) int64 { return heldIDs[i%int64(len(heldIDs))] })
	}
	if err != nil {
		return nil, err
	}
	if stop != nil {
		defer func() {
			if stop != nil {
				stop()
			}
		}()
	}
	if err := sleep(ctx, b.cfg.Warmup); err != nil {
		return nil, err
	}
	before, err := b.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := sleep(ctx, b.cfg.Window); err != nil {
		return nil, err
	}
	after, err := b.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if stop != nil {
		var werr error
		m.WriterErrors, werr = stop()
		stop = nil
		if werr != nil {
			m.WriterLastError = werr.Error()
		}
	}
	if m.HeldEnd, err = fleet.Held(ctx); err != nil {
		return nil, err
	}
	for i := range after {
		d, err := after[i].Sub(before[i])
		if err != nil {
			return nil, err
		}
		m.Deltas = append(m.Deltas, d)
		m.FleetConns = append(m.FleetConns, after[i].Clients-pre[i])
	}
	return m, nil
}

// snapshot reads every node, one after the other.
func (b *Bench) snapshot(ctx context.Context) ([]Snapshot, error) {
	out := make([]Snapshot, len(b.nodes))
	for i, n := range b.nodes {
		s, err := n.Read(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// settle waits up to 10 s for the last fleet's connections to be gone
// from every node (the server notices a closed connection on its next
// event-loop pass, a slow one on a busy machine), and returns each
// node's connected_clients then: the count the next fleet's are counted
// from.
func (b *Bench) settle(ctx context.Context) ([]int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := b.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		clients := make([]int, len(s))
		settled := true
		for i := range s {
			clients[i] = s[i].Clients
			settled = settled && s[i].Clients <= b.harness[i]
		}
		if settled || time.Now().After(deadline) {
			return clients, nil
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Writer is the client of the write scenarios: another service, or
// another instance's writes, that the fleet's copies must hear of. It
// writes Items as the generated repository encodes them, so a system
// that reloads a written key reads a value it can decode. For a system
// that hears only the repositories' own writes it writes through a
// repository of the system's mode, which announces each write.
type Writer struct {
	rdb     redis.UniversalClient
	payload string
	repos   map[string]*ItemRepo // by mode, made at the first write of each
}

// writerConns is how many writes the writer has in flight at most, and
// so its connections to each node: enough to keep 2,000 writes/s on time
// on a busy machine.
const writerConns = 4

func newWriter(t Target, payload int) *Writer {
	rdb := t.client(func(o *redis.Options) {
		o.PoolSize, o.MinIdleConns = writerConns, writerConns
	})
	return &Writer{rdb: rdb, payload: strings.Repeat("p", payload), repos: map[string]*ItemRepo{}}
}

// open dials the writer's connections to every node before any fleet
// starts.
func (w *Writer) open(ctx context.Context) error {
	if err := connect(ctx, w.rdb); err != nil {
		return fmt.Errorf("the writer's client cannot reach Redis: %w", err)
	}
	return nil
}

func (w *Writer) Close() error {
	errs := []error{}
	for _, r := range w.repos {
		errs = append(errs, r.Close())
	}
	return errors.Join(append(errs, w.rdb.Close())...)
}

func (w *Writer) write(ctx context.Context, id, version int64) error {
	b, err := (&Item{ID: id, Version: version, Payload: w.payload}).AppendMsgpack(nil)
	if err != nil {
		return err
	}
	return w.rdb.Set(ctx, ItemKey(id), b, itemTTL).Err()
}

// writes returns what writes one Item: a plain SET, or for announced a
// repository of that mode's SetItem.
func (w *Writer) writes(announced string) (func(ctx context.Context, id, version int64) error, error) {
	if announced == "" {
		return w.write, nil
	}
	repo := w.repos[announced]
	if repo == nil {
		var err error
		if repo, err = NewItemRepo(w.rdb, hk.WithLogger(warnLog), hk.WithInvalidate(announced)); err != nil {
			return nil, err
		}
		w.repos[announced] = repo
	}
	return func(ctx context.Context, id, version int64) error {
		return repo.SetItem(ctx, &Item{ID: id, Version: version, Payload: w.payload})
	}, nil
}

// itemTTL is the annotation's ttl, which the repository writes with.
const itemTTL = time.Hour

// seed writes every held key, so that each read of one finds a value.
func (w *Writer) seed(ctx context.Context) error {
	for _, id := range heldIDs {
		if err := w.write(ctx, id, 0); err != nil {
			return fmt.Errorf("seed %s: %w", ItemKey(id), err)
		}
	}
	return nil
}

// start writes the keys keyOf gives for 0, 1, 2, ... at rate writes/s,
// on writerConns goroutines, until stop, which returns the number of
// failed writes and the last error. A writer late by more than 100 ms
// (the machine stalled) starts its schedule again rather than catching
// up in a burst: the node counts the writes it executed, which are what
// the per-write figures divide by.
func (w *Writer) start(ctx context.Context, announced string, rate float64, keyOf func(i int64) int64) (stop func() (uint64, error), err error) {
	write, err := w.writes(announced)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg      sync.WaitGroup
		errs    atomic.Uint64
		lastErr atomic.Pointer[error]
		seq     atomic.Int64
	)
	interval := time.Duration(float64(time.Second) * writerConns / rate)
	for range writerConns {
		wg.Go(func() {
			next := time.Now()
			for {
				if d := time.Until(next); d > 0 {
					if sleep(ctx, d) != nil {
						return
					}
				} else if ctx.Err() != nil {
					return
				}
				i := seq.Add(1) - 1
				if err := write(ctx, keyOf(i), i+1); err != nil && ctx.Err() == nil {
					errs.Add(1)
					lastErr.Store(&err)
				}
				next = next.Add(interval)
				if time.Since(next) > 100*time.Millisecond {
					next = time.Now()
				}
			}
		})
	}
	return func() (uint64, error) {
		cancel()
		wg.Wait()
		if e := lastErr.Load(); e != nil {
			return errs.Load(), *e
		}
		return errs.Load(), nil
	}, nil
}
