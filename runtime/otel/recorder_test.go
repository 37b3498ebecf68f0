package otel

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
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

// The counters and gauges are the repository's Stats, each its own
// field, read when the metrics are collected.
func TestObservedMetricsAreTheStats(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(t.Context())
	st := engine.Stats{Loads: 3, DegradedLoads: 2, LoadErrors: 1, Invalidations: 4, Promotions: 5, Demotions: 6, RedisErrors: 7,
		DecodeErrors: 8, LocalSize: 9, LocalBytes: 10,
		Outcomes: engine.ReadOutcomes{Local: 11, Redis: 12, Loaded: 13, Stale: 14, FailedFast: 15, Failed: 16, Canceled: 17}}
	r := newRecorder(engine.Observed{Entity: "user", Version: 2, Commands: [3]string{"GET", "MGET", "HGET"}, Stats: func() engine.Stats { return st }},
		mp.Meter(scope), noop.NewTracerProvider().Tracer(scope))
	defer r.Close()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		var points []metricdata.DataPoint[int64]
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			points = d.DataPoints
		case metricdata.Gauge[int64]:
			points = d.DataPoints
		}
		for _, p := range points {
			if v, _ := p.Attributes.Value("hotkey.version"); v.AsInt64() != 2 {
				t.Errorf("%s: version %v, want 2", m.Name, v.Emit())
			}
			name := m.Name
			if o, ok := p.Attributes.Value("hotkey.read.outcome"); ok {
				name += "{" + o.Emit() + "}"
			}
			got[name] = p.Value
		}
	}
	want := map[string]int64{
		"hotkey.loads": 5, "hotkey.load.errors": 1, "hotkey.invalidations": 4, "hotkey.promotions": 5, "hotkey.demotions": 6,
		"hotkey.redis.errors": 7, "hotkey.decode.errors": 8, "hotkey.local.entries": 9, "hotkey.local.size": 10,
		"hotkey.reads{local}": 11, "hotkey.reads{redis}": 12, "hotkey.reads{loaded}": 13, "hotkey.reads{stale}": 14,
		"hotkey.reads{failed_fast}": 15, "hotkey.reads{failed}": 16, "hotkey.reads{canceled}": 17,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("observed %v,\nwant %v", got, want)
	}
}

// A meter that cannot make the instruments, or register or unregister
// the callback, is reported to OpenTelemetry's error handler, as the
// SDK's own errors are; the repository works on.
func TestWhatTheMeterRefusesIsReported(t *testing.T) {
	var errs []error
	prev := global.GetErrorHandler()
	global.SetErrorHandler(global.ErrorHandlerFunc(func(err error) { errs = append(errs, err) }))
	t.Cleanup(func() { global.SetErrorHandler(prev) })
	for _, failCallback := range []bool{false, true} {
		errs = nil
		m := refusingMeter{failCallback: failCallback}
		r := newRecorder(engine.Observed{Entity: "user", Version: 1, Commands: [3]string{"GET", "MGET", "HGET"}, Stats: func() engine.Stats { return engine.Stats{} }},
			m, noop.NewTracerProvider().Tracer(scope))
		r.Local(time.Microsecond, time.Millisecond) // no panic on the refused instruments
		r.Close()
		var refused, registration, unregistration bool
		for _, err := range errs {
			refused = refused || strings.Contains(err.Error(), "refused hotkey.read.duration")
			registration = registration || strings.Contains(err.Error(), "refused the callback")
			unregistration = unregistration || strings.Contains(err.Error(), "refused to unregister")
		}
		if !refused || registration != failCallback || unregistration == failCallback {
			t.Errorf("callback refused %v: errors reported %v", failCallback, errs)
		}
	}
}

// refusingMeter makes noop instruments with an error each, and refuses
// the callback (failCallback) or its unregistration.
type refusingMeter struct {
	metricnoop.Meter
	failCallback bool
}

func (refusingMeter) Float64Histogram(name string, _ ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return metricnoop.Float64Histogram{}, errors.New("refused " + name)
}

func (refusingMeter) Int64ObservableCounter(name string, _ ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	return metricnoop.Int64ObservableCounter{}, errors.New("refused " + name)
}

func (refusingMeter) Int64ObservableGauge(name string, _ ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	return metricnoop.Int64ObservableGauge{}, errors.New("refused " + name)
}

func (m refusingMeter) RegisterCallback(metric.Callback, ...metric.Observable) (metric.Registration, error) {
	if m.failCallback {
		return nil, errors.New("refused the callback")
	}
	return refusingRegistration{}, nil
}

type refusingRegistration struct{ metricnoop.Registration }

func (refusingRegistration) Unregister() error { return errors.New("refused to unregister") }
