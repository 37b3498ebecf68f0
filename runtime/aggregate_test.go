package runtime

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/aggregate"
	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// replicas are instances of one service sharing a Redis, each with its
// own client as separate processes would have, on one manual clock. Like
// newEnv's Cache, they promote at 100 reads/s and demote below 10.
type replicas struct {
	t     *testing.T
	clock *fakeclock.Clock
	cs    []*Cache[string, profile]
	raw   *redis.Client
	ctx   context.Context
}

func newReplicas(t *testing.T, n int, opts ...Option) *replicas {
	t.Helper()
	srv := redistest.Start(t)
	r := &replicas{t: t, clock: fakeclock.New(epoch), raw: srv.Client(t), ctx: context.Background()}
	for range n {
		base := []Option{WithEntity("profile"), withClock(r.clock), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateOff)}
		c, err := New(srv.Client(t), profileGlue, append(base, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		r.cs = append(r.cs, c)
	}
	return r
}

// read has every replica read key n times, in one batch: GetMany records
// each occurrence of a key as a read.
func (r *replicas) read(key string, n int) {
	r.t.Helper()
	for _, c := range r.cs {
		if _, err := c.GetMany(r.ctx, slices.Repeat([]string{key}, n)); err != nil {
			r.t.Fatal(err)
		}
	}
}

// step moves the clock one slot on and ticks every replica, as their
// background goroutines would.
func (r *replicas) step() {
	now := r.clock.Advance(r.cs[0].e.Detector().Rec.Slot())
	for _, c := range r.cs {
		tickAndWait(c, now)
	}
}

// Four replicas each read a key at 40% of hot_qps: none of them would ever
// promote it alone, and with aggregation all of them do, within a window.
func TestAggregationPromotesAKeySpreadOverReplicas(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run("aggregate="+strconv.FormatBool(on), func(t *testing.T) {
			r := newReplicas(t, 4, WithAggregate(on))
			for range detect.Slots { // the tenth tick, 10s in, is a promotion tick
				r.read("p:spread", 40)
				r.step()
			}
			for i, c := range r.cs {
				st := c.Stats()
				if !on {
					if len(st.HotKeys) != 0 || st.AggregateReports != 0 {
						t.Errorf("replica %d without aggregation: hot %v, %d reports", i, st.HotKeys, st.AggregateReports)
					}
					continue
				}
				if len(st.HotKeys) != 1 || st.HotKeys[0].Key != "p:spread" {
					t.Fatalf("replica %d: hot keys %+v, want p:spread", i, st.HotKeys)
				}
				// The window read ends a slot before the last report, so
				// it holds 9 slots of 4*40 reads: 1440 reads in 10s.
				if hk := st.HotKeys[0]; hk.QPS != 40 || hk.ClusterQPS != 144 {
					t.Errorf("replica %d: QPS %v, ClusterQPS %v; want 40 here, 144 cluster-wide", i, hk.QPS, hk.ClusterQPS)
				}
				if st.AggregateReports != detect.Slots || st.AggregateErrors != 0 {
					t.Errorf("replica %d: %d reports, %d errors; want one report per slot", i, st.AggregateReports, st.AggregateErrors)
				}
			}
			if keys := r.raw.Keys(r.ctx, aggregate.Prefix+"*").Val(); on != (len(keys) > 0) {
				t.Errorf("aggregate=%v left the sets %v in Redis", on, keys)
			}
		})
	}
}

// Once its reads stop, a key promoted by its cluster rate stays hot while
// the window still holds enough of them, and is then demoted.
func TestAClusterHotKeyCoolsWithTheCluster(t *testing.T) {
	r := newReplicas(t, 4, WithAggregate(true), WithDemoteEvery(10*time.Second))
	for range detect.Slots {
		r.read("p:spread", 40)
		r.step()
	}
	for range detect.Slots { // the demotion pass at 20s sees one slot of reads: 16/s cluster-wide, above warm_qps
		r.step()
	}
	for i, c := range r.cs {
		if c.e.Detector().Lookup("p:spread") == nil {
			t.Fatalf("replica %d demoted the key while its cluster rate was %v", i, c.e.Detector().ClusterRates()["p:spread"])
		}
	}
	for range detect.Slots { // at 30s nothing is left of the reads
		r.step()
	}
	for i, c := range r.cs {
		if st := c.Stats(); len(st.HotKeys) != 0 || st.Demotions != 1 {
			t.Errorf("replica %d once the cluster cooled: hot %+v, %d demotions", i, st.HotKeys, st.Demotions)
		}
	}
}

// The selector's view of a key with hot_qps 100, warm_qps 10 and
// cluster_hot_qps 400: cluster rates count a quarter, so a key is promoted
// at 400 reads/s cluster-wide and stays hot down to 40.
func TestClusterRatesPromoteAndKeepKeysHot(t *testing.T) {
	tests := []struct {
		name    string
		hot     bool    // before the pass
		local   int     // reads here in each of the window's slots
		cluster float64 // reads/s cluster-wide
		pass    detect.Pass
		want    bool
	}{
		{"a key read at cluster_hot_qps cluster-wide is promoted, though hardly read here", false, 1, 400, detect.PromotePass, true},
		{"just below cluster_hot_qps it is not", false, 1, 399, detect.PromotePass, false},
		{"a key at hot_qps here is promoted whatever the cluster reads", false, 100, 0, detect.PromotePass, true},
		{"a hot key stays while its cluster rate is at least warm_qps*cluster_hot_qps/hot_qps", true, 0, 40, detect.DemotePass, true},
		{"below that it is demoted", true, 0, 39, detect.DemotePass, false},
		{"unless it is read at warm_qps here", true, 10, 39, detect.DemotePass, true},
		{"between the two thresholds a cold key stays cold", false, 0, 200, detect.PromotePass | detect.DemotePass, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestDetector(WithHotQPS(100), WithWarmQPS(10), WithClusterHotQPS(400))
			for range detect.Slots {
				for range tt.local {
					d.Rec.Record("k")
				}
				d.advance(d.Rec.Slot())
			}
			if tt.hot {
				d.Mu.Lock()
				d.ApplyLocked(detect.Decision[string]{Promote: []string{"k"}}, []detect.KeyRate[string]{{Key: "k", Name: "k"}})
				d.Mu.Unlock()
			}
			d.Cluster.Store(&map[string]float64{"k": tt.cluster})
			d.Reselect(tt.pass)
			if got := d.Lookup("k") != nil; got != tt.want {
				t.Errorf("hot = %v, want %v (local %v)", got, tt.want, d.Rec.Rate("k"))
			}
		})
	}
}

// cmdCounter counts the commands a client sends, by name, the pipelines,
// and the pipelines that carry a report (a new connection's handshake is a
// pipeline too).
type cmdCounter struct {
	mu        sync.Mutex
	n         map[string]int
	pipelines int
	reports   int
}

func (h *cmdCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *cmdCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}
func (h *cmdCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		h.pipelines++
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "zincrby" }) {
			h.reports++
		}
		h.mu.Unlock()
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}
func (h *cmdCounter) count(cmd redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[cmd.Name()]++
}

func (h *cmdCounter) get(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[name]
}

// snapshot returns the pipelines and commands counted since the last
// snapshot, and starts counting afresh.
func (h *cmdCounter) snapshot() (int, map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, n := h.pipelines, h.n
	h.pipelines, h.n, h.reports = 0, nil, 0
	return p, n
}

// A replica reading 1,000 keys in a slot reports its AggregateTop busiest
// and its total reads, in one pipeline, and nothing for a slot without
// reads.
func TestAReplicaReportsAtMostAggregateTopKeysPerSlot(t *testing.T) {
	e := newEnv(t, WithAggregate(true))
	// Key i is read 1+i/20 times: twenty keys at each count from 1 to 50.
	var reads []string
	for i := range 1000 {
		reads = append(reads, slices.Repeat([]string{"p:" + strconv.Itoa(i)}, 1+i/20)...)
	}
	if _, err := e.c.GetMany(e.ctx, reads); err != nil {
		t.Fatal(err)
	}
	hook := &cmdCounter{}
	e.c.e.Client().AddHook(hook)
	e.tick(time.Second)

	if z, x, p := hook.get("zincrby"), hook.get("pexpire"), hook.reports; z != DefaultAggregateTop+1 || x != 1 || p != 1 {
		t.Fatalf("one slot's report sent %d ZINCRBY and %d PEXPIRE in %d pipelines; want %d and 1 in 1", z, x, p, DefaultAggregateTop+1)
	}
	key := aggregate.Key("profile", epoch.UnixNano()/int64(time.Second))
	got := e.raw.ZRevRangeWithScores(e.ctx, key, 0, -1).Val()
	want := []redis.Z{{Score: float64(len(reads)), Member: aggregate.TotalMember}}
	for i := 999; i >= 960; i-- { // counts 50 and 49, all of them
		want = append(want, redis.Z{Score: float64(1 + i/20), Member: "p:" + strconv.Itoa(i)})
	}
	for i := 949; i >= 940; i-- { // count 48, ten of twenty: the first names
		want = append(want, redis.Z{Score: 48, Member: "p:" + strconv.Itoa(i)})
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s holds\n%v\nwant\n%v", key, got, want)
	}
	if ttl := e.raw.PTTL(e.ctx, key).Val(); ttl <= 0 || ttl > 2*DefaultWindow {
		t.Errorf("PTTL %s = %v, want at most two windows", key, ttl)
	}

	e.tick(time.Second)
	if z := hook.get("zincrby"); z != DefaultAggregateTop+1 {
		t.Errorf("a slot without reads sent %d more ZINCRBY", z-DefaultAggregateTop-1)
	}
}

// With Redis down, hot keys are still served, and aggregation counts its
// failures, logging the first of each outage only.
func TestAggregationFailuresNeverFailReads(t *testing.T) {
	srv := redistest.Start(t)
	var logs syncBuffer
	clk := fakeclock.New(epoch)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1}) // fail fast while Redis is down
	t.Cleanup(func() { rdb.Close() })
	c, err := New(rdb, profileGlue, WithEntity("profile"), withClock(clk), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(InvalidateOff),
		WithAggregate(true), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, clock: clk, raw: srv.Client(t), ctx: context.Background()}
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	failures := func() int { return strings.Count(logs.String(), "cluster aggregation failed") }

	srv.Kill()
	for range 6 { // six reports and one promotion tick's read fail
		e.get("p:1") // served locally
		if _, err := e.c.Get(e.ctx, "p:cold"); err == nil {
			t.Fatal("a cold read succeeded with Redis down")
		}
		e.tick(time.Second)
	}
	st := e.c.Stats()
	if st.AggregateErrors != 7 || st.AggregateReports != 0 || failures() != 1 {
		t.Fatalf("during an outage: %d errors, %d reports, %d lines logged; want 7, 0 and 1", st.AggregateErrors, st.AggregateReports, failures())
	}

	srv.Restart(t)
	waitFor(t, "a report to succeed", func() bool {
		e.c.Get(e.ctx, "p:cold")
		e.tick(time.Second)
		return e.c.Stats().AggregateReports > 0
	})
	if !strings.Contains(logs.String(), "cluster aggregation works again") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
	srv.Kill()
	e.c.Get(e.ctx, "p:cold")
	e.tick(time.Second)
	if failures() != 2 {
		t.Errorf("a second outage logged %d lines in all, want 2", failures())
	}
}

func TestTheSetsAreCutLikeTheRecorder(t *testing.T) {
	if detect.Slots != aggregate.Slots {
		t.Fatalf("the recorder cuts a window in %d slots, the sets in %d", detect.Slots, aggregate.Slots)
	}
	r := detect.NewRecorder(engine.Detection(testConfig()).Recorder, epoch, ident)
	if first, last := aggregate.Span(epoch, DefaultWindow); last != r.Current()-2 || last-first+1 != detect.Slots {
		t.Fatalf("Span = %d..%d, want the window ending two slots before %d", first, last, r.Current())
	}
}

func TestAggregateConfig(t *testing.T) {
	tests := []struct {
		name   string
		opts   []Option
		option string // the *ConfigError's Option; "" when valid
	}{
		{"aggregation is off by default, with cluster_hot_qps following hot_qps", nil, ""},
		{"cluster_hot_qps 0 means hot_qps", []Option{WithAggregate(true), WithClusterHotQPS(0)}, ""},
		{"cluster_hot_qps may be below hot_qps", []Option{WithAggregate(true), WithClusterHotQPS(50)}, ""},
		{"cluster_hot_qps without aggregation contradicts it", []Option{WithClusterHotQPS(50)}, "cluster_hot_qps"},
		{"cluster_hot_qps with aggregation turned off contradicts it", []Option{WithClusterHotQPS(50), WithAggregate(false)}, "cluster_hot_qps"},
		{"a negative cluster_hot_qps is rejected", []Option{WithClusterHotQPS(-1)}, "cluster_hot_qps"},
		{"NaN is rejected", []Option{WithClusterHotQPS(math.NaN())}, "cluster_hot_qps"},
		{"a zero aggregate_top is rejected", []Option{WithAggregateTop(0)}, "aggregate_top"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(tt.opts...)
			err := cfg.Validate()
			var ce *ConfigError
			if tt.option == "" && err != nil || tt.option != "" && (!errors.As(err, &ce) || ce.Option != tt.option) {
				t.Fatalf("Validate() = %v, want option %q", err, tt.option)
			}
		})
	}
	if d := DefaultConfig(); d.Aggregate || d.ClusterHotQPS != 0 || engine.ClusterHotQPS(d) != DefaultHotQPS || d.AggregateTop != 50 {
		t.Errorf("defaults: %+v", d)
	}

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer rdb.Close()
	_, err := New(rdb, profileGlue, WithAggregate(true))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Option != "aggregate" || !strings.Contains(ce.Msg, "WithEntity") {
		t.Errorf("New with aggregation and no entity = %v, want a ConfigError asking for WithEntity", err)
	}
}

// BenchmarkAggregateReport measures one replica's report of one slot
// over loopback: the scan of 1,000 tracked keys for the busiest
// AggregateTop, and the pipeline of their ZINCRBYs and a PEXPIRE. cmds/s
// is what a replica sends per second at the default window.
func BenchmarkAggregateReport(b *testing.B) {
	srv := redistest.Start(b)
	clk := fakeclock.New(epoch)
	c, err := New(srv.Client(b), profileGlue, WithEntity("profile"), withClock(clk), WithLogger(quiet), WithAggregate(true), WithInvalidate(InvalidateOff))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	for i := range 1000 {
		for range 1 + i%40 {
			c.e.Detector().Rec.Record("p:" + strconv.Itoa(i))
		}
	}
	slot := c.e.Detector().Rec.Current()
	c.e.Detector().Rec.Advance(clk.Advance(c.e.Detector().Rec.Slot()))
	hook := &cmdCounter{}
	c.e.Client().AddHook(hook)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.e.Report(slot, 1000)
	}
	b.StopTimer()
	if st := c.Stats(); st.AggregateErrors != 0 {
		b.Fatalf("%d reports failed", st.AggregateErrors)
	}
	cmds := float64(hook.get("zincrby")+hook.get("pexpire")) / float64(b.N)
	b.ReportMetric(cmds/c.e.Detector().Rec.Slot().Seconds(), "cmds/s")
}

// A report that waits on Redis holds up the slots that end meanwhile,
// and loses none of them: each is reported, in order, once it can be.
func TestSlotsEndingWhileAReportWaitsAreReportedAfter(t *testing.T) {
	e := newEnv(t, WithAggregate(true))
	gate := &reportGate{release: make(chan struct{})}
	e.c.e.Client().AddHook(gate)
	e.put("p:1", sample(1, "ada"))
	var now time.Time
	for range 3 {
		for range 20 {
			e.get("p:1")
		}
		now = e.clock.Advance(time.Second)
		e.c.e.TickOnly(now) // the first report waits at the gate; the next two queue
	}
	waitFor(t, "the first report to reach Redis", func() bool { return gate.held.Load() })
	close(gate.release)
	tickAndWait(e.c, now) // the report under way reports the queued slots too
	if got := e.c.Stats().AggregateReports; got != 3 {
		t.Fatalf("%d slots reported of 3 that ended, one while a report waited on Redis", got)
	}
}

// reportGate holds the first pipeline that reports a slot (ZINCRBY)
// until release is closed.
type reportGate struct {
	held    atomic.Bool
	release chan struct{}
}

func (g *reportGate) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *reportGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *reportGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "zincrby" && g.held.CompareAndSwap(false, true) {
			<-g.release
		}
		return next(ctx, cmds)
	}
}
