package otel

import (
	"context"
	"errors"
	"time"

	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"
)

// Attribute keys. The names of the semantic conventions where they have
// one (db.*), hotkey.* where they have none: no convention for caches
// exists yet.
const (
	attrEntity      = attribute.Key("hotkey.entity")
	attrVersion     = attribute.Key("hotkey.version")
	attrOutcome     = attribute.Key("hotkey.read.outcome")
	attrLoadOutcome = attribute.Key("hotkey.load.outcome")
	attrDBSystem    = attribute.Key("db.system.name")
	attrDBOperation = attribute.Key("db.operation.name")
	loadOK          = "ok"
	loadAbsent      = "absent"
	loadFailed      = "error"
)

// loadOutcomes are hotkey.load.outcome's values.
var loadOutcomes = []string{loadOK, loadAbsent, loadFailed}

// recorder is the engine.Recorder of one repository. Every attribute set
// is made once, here: recording one costs no allocation.
type recorder struct {
	in     *instruments
	tracer trace.Tracer
	stats  func() runtime.Stats
	reg    metric.Registration // the metrics read from stats; nil if it failed

	read  [][][]metric.RecordOption // hotkey.read.duration's, by Op and Outcome
	load  [][]metric.RecordOption   // hotkey.load.duration's, by loadOutcomes
	base  metric.MeasurementOption  // entity and version alone: the counters'
	vouch []metric.RecordOption     // base, hotkey.vouch.age's
	reads []metric.ObserveOption    // hotkey.reads's, by Outcome

	// names are the read spans' names, by Op, and ends their attributes,
	// set as they end, when the outcome is known, by Op and Outcome: one
	// SetAttributes, so that the SDK grows the span's attributes once.
	names    []string
	ends     [][][]attribute.KeyValue
	loadName string
	loadEnds [][]attribute.KeyValue // a load span's attributes, set as it ends, by loadOutcomes
}

// client is a read span's start options: its kind, in a slice made once.
var client = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}

func newRecorder(c engine.Observed, m metric.Meter, t trace.Tracer) *recorder {
	in, err := newInstruments(m)
	if err != nil {
		global.Handle(err)
	}
	r := &recorder{in: in, tracer: t, stats: c.Stats}
	base := []attribute.KeyValue{attrEntity.String(c.Entity), attrVersion.Int(c.Version)}
	with := func(kv ...attribute.KeyValue) attribute.Set {
		return attribute.NewSet(append(append([]attribute.KeyValue(nil), base...), kv...)...)
	}
	r.base = metric.WithAttributeSet(with())
	r.vouch = []metric.RecordOption{r.base}
	for _, o := range engine.Outcomes() {
		r.reads = append(r.reads, metric.WithAttributeSet(with(attrOutcome.String(o.String()))))
	}
	for _, op := range engine.Ops() {
		cmd := c.Commands[op]
		var byOutcome [][]metric.RecordOption
		for _, o := range engine.Outcomes() {
			set := with(attrOutcome.String(o.String()), attrDBOperation.String(cmd))
			byOutcome = append(byOutcome, []metric.RecordOption{metric.WithAttributeSet(set)})
		}
		r.read = append(r.read, byOutcome)
		r.names = append(r.names, cmd+" "+c.Entity)
		var ends [][]attribute.KeyValue
		for _, o := range engine.Outcomes() {
			ends = append(ends, append(base[:len(base):len(base)], attrDBSystem.String("redis"), attrDBOperation.String(cmd), attrOutcome.String(o.String())))
		}
		r.ends = append(r.ends, ends)
	}
	r.loadName = "load " + c.Entity
	for _, o := range loadOutcomes {
		r.load = append(r.load, []metric.RecordOption{metric.WithAttributeSet(with(attrLoadOutcome.String(o)))})
		r.loadEnds = append(r.loadEnds, append(base[:len(base):len(base)], attrLoadOutcome.String(o)))
	}
	if r.reg, err = m.RegisterCallback(r.observe, in.observables()...); err != nil {
		global.Handle(err)
	}
	return r
}

// Local records a read served from a vouched local copy.
func (r *recorder) Local(took, vouched time.Duration) {
	ctx := context.Background()
	r.in.readDuration.Record(ctx, took.Seconds(), r.read[engine.OpGet][engine.Local]...)
	r.in.vouchAge.Record(ctx, vouched.Seconds(), r.vouch...)
}

// Read starts the span of a read that leaves the process.
func (r *recorder) Read(ctx context.Context, op engine.Op) context.Context {
	ctx, _ = r.tracer.Start(ctx, r.names[op], client...)
	return ctx
}

// ReadEnd ends the read Read started, with its outcome.
func (r *recorder) ReadEnd(ctx context.Context, op engine.Op, o engine.Outcome, took time.Duration, err error) {
	s := trace.SpanFromContext(ctx)
	s.SetAttributes(r.ends[op][o]...)
	if o == engine.Failed || o == engine.FailedFast {
		s.SetStatus(codes.Error, err.Error())
	}
	s.End()
	r.in.readDuration.Record(ctx, took.Seconds(), r.read[op][o]...)
}

// Load starts the span of a loader call, a child of its read's.
func (r *recorder) Load(ctx context.Context) context.Context {
	ctx, _ = r.tracer.Start(ctx, r.loadName)
	return ctx
}

// LoadEnd ends the loader call Load started.
func (r *recorder) LoadEnd(ctx context.Context, took time.Duration, err error) {
	i := 0
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		i = 1
	case err != nil:
		i = 2
	}
	s := trace.SpanFromContext(ctx)
	s.SetAttributes(r.loadEnds[i]...)
	if i == 2 {
		s.SetStatus(codes.Error, err.Error())
	}
	s.End()
	r.in.loadDuration.Record(ctx, took.Seconds(), r.load[i]...)
}

// Close stops reading the repository's Stats.
func (r *recorder) Close() {
	if r.reg != nil {
		if err := r.reg.Unregister(); err != nil {
			global.Handle(err)
		}
	}
}

// observe reports the metrics read from the repository's Stats, once per
// collection.
func (r *recorder) observe(_ context.Context, o metric.Observer) error {
	s := r.stats()
	for i, oc := range engine.Outcomes() {
		o.ObserveInt64(r.in.reads, int64(s.Outcomes.Of(oc)), r.reads[i])
	}
	counts := []struct {
		in metric.Int64Observable
		n  uint64
	}{
		{r.in.loads, s.Loads + s.DegradedLoads}, {r.in.loadErrors, s.LoadErrors},
		{r.in.invalidations, s.Invalidations}, {r.in.promotions, s.Promotions}, {r.in.demotions, s.Demotions},
		{r.in.redisErrors, s.RedisErrors}, {r.in.decodeErrors, s.DecodeErrors},
		{r.in.entries, uint64(s.LocalSize)}, {r.in.size, uint64(s.LocalBytes)},
	}
	for _, c := range counts {
		o.ObserveInt64(c.in, int64(c.n), r.base)
	}
	return nil
}
