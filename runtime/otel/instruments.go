package otel

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// instruments are the metrics of one repository, made on its meter (the
// SDK hands every repository the same instruments by name).
type instruments struct {
	readDuration, loadDuration, vouchAge metric.Float64Histogram

	reads, loads, loadErrors, invalidations, promotions, demotions metric.Int64ObservableCounter
	redisErrors, decodeErrors                                      metric.Int64ObservableCounter
	entries, size                                                  metric.Int64ObservableGauge
}

// Bucket boundaries, in seconds. A local read takes about a hundred
// nanoseconds and a read of Redis on a LAN tens of microseconds to
// milliseconds; a loader call, a database's time. A vouch is never older
// than 50 ms when a copy is served (the freshness bound).
var (
	readBuckets  = []float64{1e-7, 2.5e-7, 5e-7, 1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5}
	loadBuckets  = []float64{1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	vouchBuckets = []float64{1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 3e-2, 4e-2, 5e-2, 0.1}
)

// newInstruments makes the instruments on m; an error names each that
// could not be made, which then records nothing.
func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var errs []error
	hist := func(h *metric.Float64Histogram, name, desc string, buckets []float64) {
		var err error
		*h, err = m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
	}
	count := func(c *metric.Int64ObservableCounter, name, unit, desc string) {
		var err error
		*c, err = m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
	}
	gauge := func(g *metric.Int64ObservableGauge, name, unit, desc string) {
		var err error
		*g, err = m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
	}
	hist(&in.readDuration, "hotkey.read.duration", "How long a read took, by outcome; reads served locally are sampled one in 256.", readBuckets)
	hist(&in.loadDuration, "hotkey.load.duration", "How long a call of the loader took.", loadBuckets)
	hist(&in.vouchAge, "hotkey.vouch.age", "How long before a read served locally its copy's node was last vouched for by its invalidation session: the freshness the read got. Sampled one in 256.", vouchBuckets)
	count(&in.reads, "hotkey.reads", "{read}", "Reads, by how each was answered (hotkey.read.outcome).")
	count(&in.loads, "hotkey.loads", "{call}", "Calls of the loader: after a Redis miss, and with degrade=loader while Redis fails.")
	count(&in.loadErrors, "hotkey.load.errors", "{call}", "Calls of the loader that failed; an absent row is not a failure.")
	count(&in.invalidations, "hotkey.invalidations", "{copy}", "Local copies marked unverified because their key was written, here or anywhere.")
	count(&in.promotions, "hotkey.promotions", "{key}", "Keys that became hot.")
	count(&in.demotions, "hotkey.demotions", "{key}", "Hot keys that cooled.")
	count(&in.redisErrors, "hotkey.redis.errors", "{command}", "Redis commands that failed; a command whose caller's context ended first did not.")
	count(&in.decodeErrors, "hotkey.decode.errors", "{value}", "Values in Redis that did not decode as this version's.")
	gauge(&in.entries, "hotkey.local.entries", "{entry}", "Values held locally.")
	gauge(&in.size, "hotkey.local.size", "By", "The encoded size of the values held locally: what they occupy in Redis.")
	return &in, errors.Join(errs...)
}

// observables are the instruments read from the repository's Stats when
// the metrics are collected.
func (in *instruments) observables() []metric.Observable {
	return []metric.Observable{in.reads, in.loads, in.loadErrors, in.invalidations, in.promotions, in.demotions,
		in.redisErrors, in.decodeErrors, in.entries, in.size}
}
