package otel_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hotkeygen/hotkeygen/internal/testing/paired"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
	hotkeyotel "github.com/hotkeygen/hotkeygen/runtime/otel"
)

// benchPair returns two repositories of one entity on one Redis, on the
// wall clock as a service runs them: off without OpenTelemetry, on with
// the SDK's meter provider and a tracer provider sampling spans by
// sampler (nil for none: noop's), exported through a batch processor
// to an exporter that drops them, as a traced service's are. opts are
// both's.
func benchPair(b *testing.B, sampler sdktrace.Sampler, opts ...runtime.Option) (off, on *runtime.Cache[string, item]) {
	b.Helper()
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { rdb.Close() })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var tp trace.TracerProvider = noop.NewTracerProvider()
	if sampler != nil {
		sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
		tp = sdk
	}
	glue := runtime.Glue[string, item]{Key: func(k string) string { return k }, Clone: cloneItem, Prefix: "user:"}
	base := append([]runtime.Option{runtime.WithEntity("user"), runtime.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	make := func(more ...runtime.Option) *runtime.Cache[string, item] {
		c, err := runtime.New(rdb, glue, append(append([]runtime.Option(nil), base...), more...)...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	off, on = make(), make(hotkeyotel.Instrument(hotkeyotel.WithMeterProvider(mp), hotkeyotel.WithTracerProvider(tp)))
	if err := off.Set(context.Background(), "user:42", &item{Name: "ada"}); err != nil {
		b.Fatal(err)
	}
	return off, on
}

// BenchmarkGetHotOTelPaired alternates batches of local hits on a
// repository with OpenTelemetry off and one with it on, on every
// goroutine, and reports their ratio: what instrumenting costs a hot read.
// Get's allocation is the caller's copy; View lends the value, and
// allocates nothing.
func BenchmarkGetHotOTelPaired(b *testing.B) {
	ctx := context.Background()
	for _, read := range []struct {
		name string
		read func(*runtime.Cache[string, item])
	}{
		{"Get", func(c *runtime.Cache[string, item]) { c.Get(ctx, "user:42") }},
		{"View", func(c *runtime.Cache[string, item]) { c.View(ctx, "user:42", func(*item) error { return nil }) }},
	} {
		b.Run(read.name, func(b *testing.B) {
			off, on := benchPair(b, sdktrace.AlwaysSample(), runtime.WithHotQPS(100), runtime.WithWarmQPS(10))
			for _, c := range []*runtime.Cache[string, item]{off, on} {
				deadline := time.Now().Add(10 * time.Second)
				for c.Stats().Hits == 0 { // hot, held, and vouched for
					if time.Now().After(deadline) {
						b.Fatal("user:42 not served locally after 10s")
					}
					if _, err := c.Get(ctx, "user:42"); err != nil {
						b.Fatal(err)
					}
				}
			}
			ratio := paired.Parallel(b, func() { read.read(on) }, func() { read.read(off) })
			b.ReportMetric(ratio, "on/off")
		})
	}
}

// BenchmarkGetColdOTelPaired alternates one cold read of a key Redis
// holds through each repository, and reports their ratio: what the
// histogram, and the span when it is sampled, cost a read that goes to
// Redis, with metrics alone, with every read's span sampled, and with one
// in ten (a parent-based ratio sampler, as services run).
func BenchmarkGetColdOTelPaired(b *testing.B) {
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{
		{"metrics", nil},
		{"metrics+every-span", sdktrace.AlwaysSample()},
		{"metrics+one-span-in-10", sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			off, on := benchPair(b, tc.sampler, runtime.WithHotQPS(math.MaxFloat64/2), runtime.WithWarmQPS(1))
			ctx := context.Background()
			get := func(c *runtime.Cache[string, item]) func() {
				return func() {
					if _, err := c.Get(ctx, "user:42"); err != nil {
						b.Fatal(err)
					}
				}
			}
			paired.Serial(b, "on", get(on), "off", get(off))
		})
	}
}
