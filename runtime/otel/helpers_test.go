package otel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
	hotkeyotel "github.com/hotkeygen/hotkeygen/runtime/otel"
)

func TestMain(m *testing.M) {
	redistest.Main(exampleRedis{m}) // the examples' server, go-redis's log off, no goroutine left
}

// item is the value of the test caches, keyed by its Redis key itself.
type item struct{ Name string }

func cloneItem(v *item) *item { c := *v; return &c }

// env is a Cache instrumented with an SDK meter provider read by hand and
// a tracer provider whose spans are recorded, on a private Redis, with a
// manual clock that never moves: with hot_qps 100, the 100th read of a
// key promotes it.
type env struct {
	t      *testing.T
	srv    *redistest.Server
	raw    *redis.Client
	rdb    *redis.Client
	c      *runtime.Cache[string, item]
	ctx    context.Context
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	loads  atomic.Int64
}

// newEnv makes the env; instrument, when given, is called on the client
// before the Cache is made on it (redisotel's hooks).
func newEnv(t *testing.T, instrument func(*redis.Client, *sdktrace.TracerProvider), opts ...runtime.Option) *env {
	t.Helper()
	e := &env{t: t, srv: redistest.Start(t), ctx: context.Background(), reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	e.raw = e.srv.Client(t)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(e.reader))
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.spans))
	t.Cleanup(func() { _ = mp.Shutdown(e.ctx); _ = e.tp.Shutdown(e.ctx) })
	// No retries: a test that stops Redis sees each read fail at once.
	e.rdb = redis.NewClient(&redis.Options{Addr: e.srv.Addr, MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { e.rdb.Close() })
	if instrument != nil {
		instrument(e.rdb, e.tp)
	}
	load := func(_ context.Context, k string) (*item, error) {
		e.loads.Add(1)
		switch k {
		case "account:none":
			return nil, runtime.ErrNotFound
		case "account:broken":
			return nil, errors.New("the database is down")
		}
		return &item{Name: "loaded " + k}, nil
	}
	base := []runtime.Option{
		runtime.WithEntity("account"),
		func(c *runtime.Config) { c.Clock = fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) },
		runtime.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		runtime.WithHotQPS(100), runtime.WithWarmQPS(10),
		runtime.WithInvalidate(runtime.InvalidateTracking),
		runtime.WithLoader(load),
		hotkeyotel.Instrument(hotkeyotel.WithMeterProvider(mp), hotkeyotel.WithTracerProvider(e.tp)),
	}
	glue := runtime.Glue[string, item]{Key: func(k string) string { return k }, Clone: cloneItem, Prefix: "account:"}
	c, err := runtime.New(e.rdb, glue, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e.c = c
	return e
}

func (e *env) put(key, name string) {
	e.t.Helper()
	b, err := msgpack.Marshal(&item{Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.raw.Set(e.ctx, key, b, 0).Err(); err != nil {
		e.t.Fatal(err)
	}
}

// get reads key and returns its name, failing the test on an error.
func (e *env) get(key string) string {
	e.t.Helper()
	v, err := e.c.Get(e.ctx, key)
	if err != nil {
		e.t.Fatalf("Get(%q): %v", key, err)
	}
	return v.Name
}

// heat reads key until it is hot and a read of it is a local hit.
func (e *env) heat(key string) {
	e.t.Helper()
	for range 101 {
		e.get(key)
	}
	redistest.WaitFor(e.t, "a local hit on "+key, func() bool {
		before := e.c.Stats().Hits
		e.get(key)
		return e.c.Stats().Hits > before
	})
}

// metrics collects what the reader holds now.
func (e *env) metrics() metricdata.ResourceMetrics {
	e.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := e.reader.Collect(e.ctx, &rm); err != nil {
		e.t.Fatal(err)
	}
	return rm
}

// find returns the metric named name, or nil.
func find(rm metricdata.ResourceMetrics, name string) *metricdata.Metrics {
	for _, sm := range rm.ScopeMetrics {
		for i, m := range sm.Metrics {
			if m.Name == name {
				return &sm.Metrics[i]
			}
		}
	}
	return nil
}

// has reports whether set holds every attribute of want.
func has(set attribute.Set, want ...attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// sum returns the value of the point of the counter or gauge name whose
// attributes hold want, and whether there is one.
func sum(rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (int64, bool) {
	m := find(rm, name)
	if m == nil {
		return 0, false
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if has(p.Attributes, want...) {
				return p.Value, true
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if has(p.Attributes, want...) {
				return p.Value, true
			}
		}
	}
	return 0, false
}

// histogram returns the point of the histogram name whose attributes
// hold want.
func histogram(rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (metricdata.HistogramDataPoint[float64], error) {
	m := find(rm, name)
	if m == nil {
		return metricdata.HistogramDataPoint[float64]{}, errors.New(name + " not reported")
	}
	for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if has(p.Attributes, want...) {
			return p, nil
		}
	}
	return metricdata.HistogramDataPoint[float64]{}, errors.New(name + ": no point with those attributes")
}

// ended returns the spans ended since the last call, and forgets them.
func (e *env) ended() []sdktrace.ReadOnlySpan {
	s := e.spans.Ended()
	e.spans.Reset()
	return s
}

// attr returns the value of a span's attribute key, "" when it has none.
func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// named returns the spans named name.
func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}
