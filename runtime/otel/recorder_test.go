package otel

import (
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"
)

// A local read's sample is recorded with attribute sets made once: it
// allocates nothing, so a hot read stays at its allocations with
// OpenTelemetry on (BenchmarkGetHotOTelPaired shows them).
func TestRecordingALocalReadAllocatesNothing(t *testing.T) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(t.Context())
	r := newRecorder(engine.Observed{Entity: "user", Version: 1, Commands: [3]string{"GET", "MGET", "HGET"}, Stats: func() engine.Stats { return engine.Stats{} }},
		mp.Meter(scope), noop.NewTracerProvider().Tracer(scope))
	defer r.Close()
	if n := testing.AllocsPerRun(1000, func() { r.Local(120*time.Nanosecond, 3*time.Millisecond) }); n != 0 {
		t.Fatalf("recording a local read allocated %v times", n)
	}
}
