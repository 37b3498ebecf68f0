package otel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
	hotkeyotel "github.com/hotkeygen/hotkeygen/runtime/otel"
)

var (
	entity = attribute.String("hotkey.entity", "account")
	v1     = attribute.Int("hotkey.version", 1)
)

func outcome(o string) attribute.KeyValue { return attribute.String("hotkey.read.outcome", o) }

// TestEveryOutcomeIsReadBack reads through an instrumented repository on
// a real Redis as a service would, outcome after outcome, and reads back
// through the SDK what each read reported: its span, its duration, and
// the counters.
func TestEveryOutcomeIsReadBack(t *testing.T) {
	e := newEnv(t, nil)

	// A read of a key Redis holds: a client span, outcome redis.
	e.put("account:1", "ada")
	if got := e.get("account:1"); got != "ada" {
		t.Fatalf("Get = %q, want ada", got)
	}
	spans := e.ended()
	if len(spans) != 1 {
		t.Fatalf("a Redis read ended %d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name() != "GET account" || s.SpanKind() != trace.SpanKindClient || attr(s, "db.system.name") != "redis" ||
		attr(s, "db.operation.name") != "GET" || attr(s, "hotkey.read.outcome") != "redis" || attr(s, "hotkey.entity") != "account" ||
		s.Status().Code == codes.Error {
		t.Fatalf("Redis read's span: %s %v %v %v", s.Name(), s.SpanKind(), s.Attributes(), s.Status())
	}

	// A read Redis misses, which the loader answers: the load is a child.
	if got := e.get("account:9"); got != "loaded account:9" {
		t.Fatalf("Get = %q, want the loader's", got)
	}
	spans = e.ended()
	reads, loads := named(spans, "GET account"), named(spans, "load account")
	if len(reads) != 1 || len(loads) != 1 || attr(reads[0], "hotkey.read.outcome") != "loaded" {
		t.Fatalf("a loaded read ended %d read and %d load spans (%v); want 1 and 1, outcome loaded", len(reads), len(loads), spans)
	}
	if loads[0].Parent().SpanID() != reads[0].SpanContext().SpanID() || attr(loads[0], "hotkey.load.outcome") != "ok" || attr(loads[0], "hotkey.entity") != "account" {
		t.Fatalf("the load's span: parent %v, attributes %v; want the read's child, outcome ok", loads[0].Parent().SpanID(), loads[0].Attributes())
	}
	// An absent row: the loader says so; it is an answer, not an error.
	if _, err := e.c.Get(e.ctx, "account:none"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get of an absent row: %v, want ErrNotFound", err)
	}
	if l := named(e.ended(), "load account"); len(l) != 1 || attr(l[0], "hotkey.load.outcome") != "absent" || l[0].Status().Code == codes.Error {
		t.Fatalf("the absent row's load spans: %v", l)
	}

	// A loader that fails: both spans say so.
	if _, err := e.c.Get(e.ctx, "account:broken"); err == nil {
		t.Fatal("a read whose loader failed succeeded")
	}
	spans = e.ended()
	reads, loads = named(spans, "GET account"), named(spans, "load account")
	if len(reads) != 1 || attr(reads[0], "hotkey.read.outcome") != "failed" || reads[0].Status().Code != codes.Error ||
		len(loads) != 1 || attr(loads[0], "hotkey.load.outcome") != "error" || loads[0].Status().Code != codes.Error {
		t.Fatalf("a failed load's spans: %v", spans)
	}

	// A batch: one span, MGET, whose outcome is its furthest key's.
	vs, err := e.c.GetMany(e.ctx, []string{"account:1", "account:5"})
	if err != nil || vs[0].Name != "ada" || vs[1].Name != "loaded account:5" {
		t.Fatalf("GetMany = %v, %v", vs, err)
	}
	spans = e.ended()
	batch, loads := named(spans, "MGET account"), named(spans, "load account")
	if len(batch) != 1 || attr(batch[0], "db.operation.name") != "MGET" || attr(batch[0], "hotkey.read.outcome") != "loaded" ||
		len(loads) != 1 || loads[0].Parent().SpanID() != batch[0].SpanContext().SpanID() {
		t.Fatalf("GetMany's spans: %v", spans)
	}

	// A hot key, read locally: no span, each read counted, a sample timed.
	// A read the session did not vouch for at that moment (a loaded
	// machine delays its pings) goes to Redis, with a span: the spans
	// are the reads that were not local, none of the local ones.
	e.heat("account:1")
	e.ended()
	before := e.c.Stats()
	const localReads = 256 * 20 // a sample of none would be a chance of e^-20
	for range localReads {
		e.get("account:1")
	}
	after := e.c.Stats()
	locals := after.Outcomes.Local - before.Outcomes.Local
	if spans, away := e.ended(), localReads-locals; uint64(len(spans)) != away || after.Reads-before.Reads != localReads ||
		after.Outcomes.Stale != before.Outcomes.Stale || locals < localReads/2 {
		t.Fatalf("%d reads of a hot key: %d local, %d stale, and %d spans; want a span for each read not local, most local",
			localReads, locals, after.Outcomes.Stale-before.Outcomes.Stale, len(spans))
	}
	rm := e.metrics()
	if got, _ := sum(rm, "hotkey.reads", entity, v1, outcome("local")); uint64(got) < after.Outcomes.Local {
		t.Fatalf("hotkey.reads{local} = %d, Stats says %d", got, after.Outcomes.Local)
	}
	local, err := histogram(rm, "hotkey.read.duration", entity, outcome("local"), attribute.String("db.operation.name", "GET"))
	if err != nil || local.Count == 0 || local.Count > localReads+1 {
		t.Fatalf("hotkey.read.duration{local}: %d samples (%v), want some of %d reads", local.Count, err, localReads)
	}
	vouch, err := histogram(rm, "hotkey.vouch.age", entity, v1)
	if mx, ok := vouch.Max.Value(); err != nil || vouch.Count == 0 || !ok || mx > 0.05 {
		t.Fatalf("hotkey.vouch.age: %d samples, max %v (%v); want some, none past the 50 ms bound", vouch.Count, mx, err)
	}
	for _, o := range []string{"redis", "loaded"} {
		if h, err := histogram(rm, "hotkey.read.duration", entity, outcome(o)); err != nil || h.Count == 0 {
			t.Fatalf("hotkey.read.duration{%s}: %v", o, err)
		}
	}
	for _, o := range []struct {
		outcome string
		n       uint64
	}{{"ok", 2}, {"absent", 1}, {"error", 1}} {
		if h, err := histogram(rm, "hotkey.load.duration", entity, attribute.String("hotkey.load.outcome", o.outcome)); err != nil || h.Count != o.n {
			t.Fatalf("hotkey.load.duration{%s}: %d (%v), want %d", o.outcome, h.Count, err, o.n)
		}
	}

	// Redis killed: the hot key is served stale, a cold read fails.
	e.srv.Kill()
	redistest.WaitFor(t, "the session's loss", func() bool { return !e.c.Stats().InvalidationConnected() })
	if _, err := e.c.Get(e.ctx, "account:2"); err == nil {
		t.Fatal("a cold read succeeded with Redis down")
	}
	failed := e.ended()
	if len(failed) != 1 || failed[0].Status().Code != codes.Error {
		t.Fatalf("the failed read's spans: %v", failed)
	}
	failedAs := attr(failed[0], "hotkey.read.outcome")
	if failedAs != "failed" && failedAs != "failed_fast" {
		t.Fatalf("the failed read's outcome: %q", failedAs)
	}
	for range 5 {
		if got := e.get("account:1"); got != "ada" {
			t.Fatalf("the hot key during the outage = %q, want ada", got)
		}
	}

	// The counters say what Stats says, and add up to every read.
	rm = e.metrics()
	st := e.c.Stats()
	var total uint64
	for _, o := range []struct {
		name string
		want uint64
	}{
		{"local", st.Outcomes.Local}, {"redis", st.Outcomes.Redis}, {"loaded", st.Outcomes.Loaded},
		{"stale", st.Outcomes.Stale}, {"failed_fast", st.Outcomes.FailedFast}, {"failed", st.Outcomes.Failed}, {"canceled", st.Outcomes.Canceled},
	} {
		got, _ := sum(rm, "hotkey.reads", entity, outcome(o.name))
		if uint64(got) != o.want {
			t.Errorf("hotkey.reads{%s} = %d, Stats says %d", o.name, got, o.want)
		}
		total += uint64(got)
	}
	if total != st.Reads || st.Outcomes.Stale != 5 || st.Outcomes.Redis == 0 || st.Outcomes.Loaded != 3 {
		t.Fatalf("outcomes %+v add up to %d; Stats.Reads = %d; want 5 stale, 3 loaded", st.Outcomes, total, st.Reads)
	}
	for _, c := range []struct {
		name string
		want uint64
	}{
		{"hotkey.loads", 4}, {"hotkey.load.errors", 1}, {"hotkey.promotions", st.Promotions}, {"hotkey.local.entries", 1},
		{"hotkey.redis.errors", st.RedisErrors},
	} {
		if got, ok := sum(rm, c.name, entity, v1); !ok || uint64(got) != c.want {
			t.Errorf("%s = %d (reported: %v), want %d", c.name, got, ok, c.want)
		}
	}
	if got, _ := sum(rm, "hotkey.local.size", entity); got <= 0 {
		t.Errorf("hotkey.local.size = %d, want the encoded size of the copy", got)
	}

	// Closed, the repository reports no more.
	e.c.Close()
	if _, ok := sum(e.metrics(), "hotkey.reads", entity); ok {
		t.Fatal("a closed repository still reports hotkey.reads")
	}
}

// TestRedisSpansNestUnderTheRead instruments the client with go-redis's
// redisotel, as a service that traces its Redis calls does: the
// commands' spans are children of the read's: its GET, and a load's
// lease and write-back beside the loader's call.
func TestRedisSpansNestUnderTheRead(t *testing.T) {
	e := newEnv(t, func(rdb *redis.Client, tp *sdktrace.TracerProvider) {
		if err := redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(tp)); err != nil {
			t.Fatal(err)
		}
	})
	e.put("account:1", "ada")
	e.ended()
	e.get("account:1")
	e.get("account:9") // loaded
	spans := e.ended()
	reads := named(spans, "GET account")
	if len(reads) != 2 {
		t.Fatalf("%d read spans, want 2: %v", len(reads), spans)
	}
	mine := map[trace.SpanID]string{}
	for _, s := range spans {
		if s.Name() == "GET account" || s.Name() == "load account" {
			mine[s.SpanContext().SpanID()] = s.Name()
		}
	}
	var commands []string
	for _, s := range spans {
		if mine[s.SpanContext().SpanID()] != "" || connecting[s.Name()] {
			continue
		}
		commands = append(commands, s.Name())
		if mine[s.Parent().SpanID()] != "GET account" {
			t.Errorf("redisotel span %q is not under a read of ours", s.Name())
		}
	}
	t.Logf("commands under the reads: %v", commands)
	if len(commands) < 3 { // a GET each, and the load's lease and write-back
		t.Fatalf("%d redisotel spans under the reads, want at least 3: %v", len(commands), spans)
	}
}

// connecting are the spans redisotel makes as the client connects, under
// no request: the dial, and the commands that set the connection up.
var connecting = map[string]bool{"redis.dial": true, "hello": true, "client": true, "redis.pipeline client": true}

// Without options, Instrument reports to the global providers, looked up
// when each repository is made: a program may set them after building
// its options.
func TestInstrumentTakesTheGlobalProviders(t *testing.T) {
	opt := hotkeyotel.Instrument() // before the globals are set
	reader, spans := sdkmetric.NewManualReader(), tracetest.NewSpanRecorder()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	prevM, prevT := otel.GetMeterProvider(), otel.GetTracerProvider()
	otel.SetMeterProvider(mp)
	otel.SetTracerProvider(tp)
	t.Cleanup(func() {
		otel.SetMeterProvider(prevM)
		otel.SetTracerProvider(prevT)
		_ = mp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, err := runtime.New(rdb, runtime.Glue[string, item]{Key: func(k string) string { return k }, Clone: cloneItem, Prefix: "account:"},
		runtime.WithEntity("account"), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Get(context.Background(), "account:1"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get of a missing key: %v", err)
	}
	if got := named(spans.Ended(), "GET account"); len(got) != 1 || attr(got[0], "hotkey.read.outcome") != "redis" {
		t.Fatalf("the global tracer provider recorded %v", spans.Ended())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if n, ok := sum(rm, "hotkey.reads", entity, outcome("redis")); !ok || n != 1 {
		t.Fatalf("the global meter provider: hotkey.reads{redis} = %d (reported: %v), want 1", n, ok)
	}
}
