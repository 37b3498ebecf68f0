// Package otel reports what hotkeygen repositories do to OpenTelemetry:
// metrics, and a span for each read that leaves the process. It lives
// apart from runtime so that programs without OpenTelemetry do not depend
// on it. Instrument is an option of every repository:
//
//	users := model.MustNewUserRepo(rdb, hotkeyotel.Instrument())
//
// takes the global MeterProvider and TracerProvider, or those given with
// WithMeterProvider and WithTracerProvider.
//
// Every instrument carries the attributes hotkey.entity ("user") and
// hotkey.version (the version of its values, which tells two builds apart
// during a deploy); none carries a key, so series do not grow with the
// traffic. docs/observability.md gives each with its unit:
//
//	hotkey.reads            counter    reads, by hotkey.read.outcome
//	hotkey.read.duration    histogram  how long a read took, by outcome and db.operation.name
//	hotkey.vouch.age        histogram  how long before a local read its copy was last vouched for
//	hotkey.loads            counter    loader calls; hotkey.load.errors those that failed
//	hotkey.load.duration    histogram  how long a loader call took, by hotkey.load.outcome
//	hotkey.invalidations    counter    local copies a write made unverified
//	hotkey.promotions       counter    keys that became hot; hotkey.demotions, that cooled
//	hotkey.local.entries    gauge      values held locally; hotkey.local.size, their encoded bytes
//	hotkey.redis.errors     counter    Redis commands that failed
//	hotkey.decode.errors    counter    values in Redis that did not decode
//
// A read's outcome (hotkey.read.outcome) is local (a vouched copy), redis,
// loaded (Redis missed; the load answered), stale (an unvouched copy while
// Redis was unreachable), failed_fast (refused at once while Redis was
// unreachable), failed, or canceled (the caller's context ended first). The reads served locally are counted, every
// one, at no cost to them, from the runtime's counters when the metrics
// are collected; their durations and vouch ages are recorded for one in
// 256 of them, to stay off the hot path: the histograms' shapes are
// theirs, their counts a sample.
//
// A read that leaves the process, to Redis or the loader, is a client
// span named after its command and entity ("GET user"), with
// db.system.name=redis, db.operation.name and its outcome; a loader call
// is a child span, "load user". Spans go-redis's redisotel makes for the
// commands, when the service instruments its client, nest under the
// read's. A read served locally adds no span.
package otel

import (
	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"
)

// scope is the instrumentation scope's name: this package's path.
const scope = "github.com/hotkeygen/hotkeygen/runtime/otel"

// Option changes where Instrument reports.
type Option func(*observer)

// WithMeterProvider reports metrics to mp instead of the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *observer) { o.mp = mp }
}

// WithTracerProvider reports spans to tp instead of the global provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *observer) { o.tp = tp }
}

// Instrument returns the option that makes a repository report its
// metrics and spans. One Instrument may be given to many repositories;
// each reports under its entity, and stops when it is closed.
func Instrument(opts ...Option) runtime.Option {
	o := &observer{}
	for _, opt := range opts {
		opt(o)
	}
	return func(c *runtime.Config) { c.Given.Observer = o }
}

// observer makes each repository's recorder.
type observer struct {
	mp metric.MeterProvider // nil for the global one
	tp trace.TracerProvider // likewise
}

// Observe is called once by each repository made with the observer: the
// providers are looked up then, so that a program may set the globals
// after building its options, as long as it does before its repositories.
func (o *observer) Observe(c engine.Observed) engine.Recorder {
	mp, tp := o.mp, o.tp
	if mp == nil {
		mp = global.GetMeterProvider()
	}
	if tp == nil {
		tp = global.GetTracerProvider()
	}
	return newRecorder(c, mp.Meter(scope), tp.Tracer(scope))
}
