// Package prom exports the stats of hotkeygen repositories as Prometheus
// metrics. It lives apart from runtime so that programs without Prometheus
// do not depend on its client.
//
// A Collector reads each repository's Stats once per scrape and turns it
// into metrics named hotkeygen_…, labelled with the entity ("user"):
//
//	users := model.MustNewUserRepo(rdb)
//	orders := model.MustNewOrderRepo(rdb)
//	c, err := prom.NewCollector([]prom.Source{users, orders})
//	if err != nil { … }
//	prometheus.MustRegister(c)
//
// Counters, totals since the repository was made:
//
//	hotkeygen_reads_total                 reads, served locally or from Redis
//	hotkeygen_hot_reads_total             reads of keys that were hot
//	hotkeygen_hits_total                  hot reads served from the local copy
//	hotkeygen_misses_total                hot reads that went to Redis
//	hotkeygen_refreshes_total             background reloads of hot keys
//	hotkeygen_refresh_errors_total        background reloads that failed
//	hotkeygen_redis_errors_total          Redis commands that failed
//	hotkeygen_decode_errors_total         values in Redis that did not decode, labelled with the version too
//	hotkeygen_keys_too_long_total         keys read often but too long to track: never hot
//	hotkeygen_promotions_total            keys that became hot
//	hotkeygen_demotions_total             hot keys that cooled
//	hotkeygen_invalidations_total         local copies dropped by a write
//	hotkeygen_invalidation_resets_total   invalidation sessions lost
//	hotkeygen_stale_reads_total           local reads no live session vouched for, while Redis was unreachable
//	hotkeygen_failed_fast_total           calls refused at once while Redis was unreachable
//	hotkeygen_loads_total                 loader calls
//	hotkeygen_load_errors_total           loader calls that failed
//	hotkeygen_degraded_loads_total        loader calls because Redis failed
//	hotkeygen_big_values_total            reads and writes above max_value_bytes
//	hotkeygen_aggregate_reports_total     cluster-wide detection reports
//	hotkeygen_aggregate_errors_total      cluster-wide reports and readings that failed
//	hotkeygen_changes_synced_total        changed ids synced to Redis (changes=on); rate() is ids synced/s
//	hotkeygen_changes_sync_failures_total batches of changed ids that failed and went back to the buffer
//	hotkeygen_changes_claims_expired_total changed ids whose worker died or stalled, back in the buffer
//	hotkeygen_changes_dropped_total       change-buffer members that were not ids of the entity
//	hotkeygen_bloom_checks_total          reads that missed Redis and asked the Bloom filter (bloom=on)
//	hotkeygen_bloom_absent_total          of those, answered absent without a load or a placeholder
//	hotkeygen_bloom_unready_total         of those, let through because the filter was not warmed
//	hotkeygen_bloom_adds_total            ids added to the filter
//	hotkeygen_bloom_errors_total          checks and additions Redis failed
//
// Gauges, as of the scrape:
//
//	hotkeygen_hot_keys                    keys hot now
//	hotkeygen_local_entries               values held locally
//	hotkeygen_local_bytes                 their encoded size
//	hotkeygen_recorder_keys               candidate keys detection tracks by name
//	hotkeygen_invalidation_connections    invalidation subscriptions up
//	hotkeygen_changes_pending             ids waiting in the change buffer
//	hotkeygen_changes_oldest_age_seconds  how long the oldest of them has waited
//
// Health, as the live page (runtime/livepage) shows it:
//
//	hotkeygen_invalidation_connected           1 while the session of every node copies are kept of is live; 0 while one is lost, and with invalidate=off
//	hotkeygen_invalidation_down_since_seconds  Unix time a session was lost; 0 while connected, and with invalidate=off
//	hotkeygen_redis_down_since_seconds         Unix time Redis was found unreachable; 0 while it answers
//	hotkeygen_info{host,pid,invalidation}      always 1: which instance this is, the version of its values and the invalidation mode in effect
//
// The page's rates are those of the counters above over the last second.
// The share of all reads served from memory, its headline, is
//
//	rate(hotkeygen_hits_total[1m]) / rate(hotkeygen_reads_total[1m])
//
// and its Redis errors per second are those of
// hotkeygen_redis_errors_total plus hotkeygen_failed_fast_total.
//
// Keys are not labels, so the number of series does not grow with the
// traffic, except in hotkeygen_hot_key_qps{entity,key}, the rate of each key
// hot now, which WithHotKeyQPS turns on: at most top_n series per entity at a
// time, though every key that passes through the hot set adds a series to
// Prometheus's storage.
//
// To prefix the names or add labels, such as the instance's role, register
// the Collector through prometheus.WrapRegistererWithPrefix or
// prometheus.WrapRegistererWith.
package prom

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// Source is what a Collector reads: every generated repository, and
// runtime.Cache, have this method.
type Source interface {
	Stats() runtime.Stats
}

// Option changes how a Collector exports.
type Option func(*options)

type options struct {
	hotKeyQPS bool
}

// WithHotKeyQPS exports hotkeygen_hot_key_qps{entity,key}, each hot key's
// reads per second on this instance. It is off by default because keys as
// labels make series come and go with the hot set.
func WithHotKeyQPS() Option { return func(o *options) { o.hotKeyQPS = true } }

// metric is one series of every entity, taken from its Stats.
type metric struct {
	name  string
	help  string
	kind  prometheus.ValueType
	value func(*runtime.Stats) float64
	// versioned series carry the version label too: the entity's values'
	// version (Stats.Version), which tells two builds' series apart
	// during a deploy.
	versioned bool
}

func counter(name, help string, v func(*runtime.Stats) uint64) metric {
	return metric{name: name + "_total", help: help, kind: prometheus.CounterValue, value: func(s *runtime.Stats) float64 { return float64(v(s)) }}
}

func versioned(m metric) metric {
	m.versioned = true
	return m
}

func gauge(name, help string, v func(*runtime.Stats) float64) metric {
	return metric{name: name, help: help, kind: prometheus.GaugeValue, value: v}
}

// metrics are the series every entity has, the change buffer's and the
// Bloom filter's (changes.go) last; the package comment lists them.
var metrics = append([]metric{
	counter("reads", "Reads of the entity's keys, served locally or from Redis.",
		func(s *runtime.Stats) uint64 { return s.Reads }),
	counter("hot_reads", "Reads of keys that were hot when read; the other reads went straight to Redis.",
		func(s *runtime.Stats) uint64 { return s.HotAccesses }),
	counter("hits", "Reads of hot keys answered from the in-process copy, without a Redis round trip.",
		func(s *runtime.Stats) uint64 { return s.Hits }),
	counter("misses", "Reads of hot keys that went to Redis because no local copy could be served: none was held, or no live invalidation session vouched for it.",
		func(s *runtime.Stats) uint64 { return s.Misses }),
	counter("refreshes", "Background reloads of hot keys from Redis that succeeded.",
		func(s *runtime.Stats) uint64 { return s.Refreshes }),
	counter("refresh_errors", "Background reloads of hot keys that failed; after refresh_failures in a row a key's local copy is dropped.",
		func(s *runtime.Stats) uint64 { return s.RefreshErrors }),
	counter("redis_errors", "Redis commands that failed (an absent key is not a failure, nor a caller's context ending).",
		func(s *runtime.Stats) uint64 { return s.RedisErrors }),
	versioned(counter("decode_errors", "Values read from Redis that did not decode as the entity's version: bytes another build of that version wrote (a struct changed without version=), or corrupt ones.",
		func(s *runtime.Stats) uint64 { return s.DecodeErrors })),
	counter("keys_too_long", "Times a key read often enough to be tracked was refused because its name alone is too long for detection: it never becomes hot.",
		func(s *runtime.Stats) uint64 { return s.KeysTooLong }),
	counter("promotions", "Keys that became hot and started being served from memory.",
		func(s *runtime.Stats) uint64 { return s.Promotions }),
	counter("demotions", "Hot keys that cooled below warm_qps and went back to Redis.",
		func(s *runtime.Stats) uint64 { return s.Demotions }),
	counter("invalidations", "Local copies dropped because their key was written, by this instance or anyone else.",
		func(s *runtime.Stats) uint64 { return s.Invalidations }),
	counter("invalidation_resets", "Losses of an invalidation session; until the next one starts, local copies are read from Redis again.",
		func(s *runtime.Stats) uint64 { return s.InvalidationResets }),
	counter("stale_reads", "Reads answered from a local copy no live invalidation session vouched for, because Redis could not be reached.",
		func(s *runtime.Stats) uint64 { return s.StaleReads }),
	counter("failed_fast", "Calls refused without asking Redis, because a recent call found it unreachable.",
		func(s *runtime.Stats) uint64 { return s.FailedFast }),
	counter("loads", "Calls of the loader, the source of truth behind Redis.",
		func(s *runtime.Stats) uint64 { return s.Loads }),
	counter("load_errors", "Loader calls that failed.",
		func(s *runtime.Stats) uint64 { return s.LoadErrors }),
	counter("degraded_loads", "Loader calls made because Redis failed (degrade=loader).",
		func(s *runtime.Stats) uint64 { return s.DegradedLoads }),
	counter("big_values", "Reads and writes of values larger than max_value_bytes.",
		func(s *runtime.Stats) uint64 { return s.BigValues }),
	counter("aggregate_reports", "Slots whose busiest keys this instance reported to cluster-wide detection.",
		func(s *runtime.Stats) uint64 { return s.AggregateReports }),
	counter("aggregate_errors", "Cluster-wide detection reports and readings that failed; reads are never affected.",
		func(s *runtime.Stats) uint64 { return s.AggregateErrors }),
	gauge("hot_keys", "Keys hot now, served from memory.",
		func(s *runtime.Stats) float64 { return float64(len(s.HotKeys)) }),
	gauge("local_entries", "Values held in the in-process cache.",
		func(s *runtime.Stats) float64 { return float64(s.LocalSize) }),
	gauge("local_bytes", "Encoded size of the values held in the in-process cache: what they take in Redis, a lower bound of their memory.",
		func(s *runtime.Stats) float64 { return float64(s.LocalBytes) }),
	gauge("recorder_keys", "Keys hot-key detection tracks by name, the candidates for hot, at most recorder_size; every other key is counted by hash.",
		func(s *runtime.Stats) float64 { return float64(s.RecorderSize) }),
	gauge("invalidation_connections", "Invalidation subscriptions up now: one per node copies of whose keys are kept; 0 with none kept, with invalidate=off, and while a lost one is being re-established.",
		func(s *runtime.Stats) float64 { return float64(s.InvalidationLive) }),
	gauge("invalidation_connected", "1 while the invalidation session of every node copies are kept of is live, so writes made anywhere reach the local copies; 0 while one is lost or connecting, and with invalidate=off.",
		func(s *runtime.Stats) float64 { return boolValue(s.InvalidationConnected()) }),
	gauge("invalidation_down_since_seconds", "Unix time an invalidation session was lost (or a node's first copy wanted one, while it connects); 0 while connected, and with invalidate=off.",
		func(s *runtime.Stats) float64 { return unixTime(s.InvalidationDownSince) }),
	gauge("redis_down_since_seconds", "Unix time Redis was found unreachable, since when hot keys are served from memory and other calls fail fast; 0 while it answers.",
		func(s *runtime.Stats) float64 { return unixTime(s.RedisDownSince) }),
}, changeMetrics...)

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixTime is t in seconds since 1970, to the millisecond, or 0 for the
// zero time.
func unixTime(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1e3
}

const (
	prefix        = "hotkeygen_"
	infoName      = prefix + "info"
	infoHelp      = "Always 1: which instance this is (host name and process id), the version of the entity's values it reads (version=) and the invalidation mode in effect (tracking, pubsub, pubsub-keys, off)."
	hotKeyQPSName = prefix + "hot_key_qps"
	hotKeyQPSHelp = "Reads per second of a key hot now, on this instance: over the detection window, or its busiest recent slot when higher."
)

// Collector is a prometheus.Collector over the Stats of one or more
// repositories. It is safe for concurrent use.
type Collector struct {
	sources []source
}

// source is one repository and its descriptions, whose entity label is
// constant.
type source struct {
	src       Source
	descs     []*prometheus.Desc // aligned with metrics
	info      *prometheus.Desc
	hotKeyQPS *prometheus.Desc // nil without WithHotKeyQPS
}

// NewCollector returns a Collector over sources. It calls each source's
// Stats once to learn its entity, and fails if a source is nil or two have
// the same entity, whose series would clash. The entity is a constant label
// of each source's series, so collectors over different entities can be
// registered side by side, and registering a second one over an entity
// already registered fails.
func NewCollector(sources []Source, opts ...Option) (*Collector, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	c := &Collector{sources: make([]source, 0, len(sources))}
	seen := make(map[string]bool, len(sources))
	for i, src := range sources {
		if src == nil {
			return nil, fmt.Errorf("prom: source %d is nil", i)
		}
		entity := src.Stats().Entity
		if seen[entity] {
			return nil, fmt.Errorf("prom: two sources of entity %q: their series would clash", entity)
		}
		seen[entity] = true
		labels := prometheus.Labels{"entity": entity}
		s := source{src: src, descs: make([]*prometheus.Desc, len(metrics))}
		withVersion := prometheus.Labels{"entity": entity, "version": strconv.Itoa(max(src.Stats().Version, 1))}
		for j, m := range metrics {
			if m.versioned {
				s.descs[j] = prometheus.NewDesc(prefix+m.name, m.help, nil, withVersion)
				continue
			}
			s.descs[j] = prometheus.NewDesc(prefix+m.name, m.help, nil, labels)
		}
		s.info = prometheus.NewDesc(infoName, infoHelp, []string{"host", "pid", "invalidation"}, withVersion)
		if o.hotKeyQPS {
			s.hotKeyQPS = prometheus.NewDesc(hotKeyQPSName, hotKeyQPSHelp, []string{"key"}, labels)
		}
		c.sources = append(c.sources, s)
	}
	return c, nil
}

// Describe sends the description of every series the Collector can export.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.sources {
		for _, d := range s.descs {
			ch <- d
		}
		ch <- s.info
		if s.hotKeyQPS != nil {
			ch <- s.hotKeyQPS
		}
	}
}

// Collect reads each source's Stats once and sends its series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.sources {
		st := s.src.Stats()
		for j, m := range metrics {
			ch <- prometheus.MustNewConstMetric(s.descs[j], m.kind, m.value(&st))
		}
		ch <- prometheus.MustNewConstMetric(s.info, prometheus.GaugeValue, 1, st.Host, strconv.Itoa(st.PID), st.Invalidation)
		if s.hotKeyQPS != nil {
			for _, hk := range st.HotKeys {
				ch <- prometheus.MustNewConstMetric(s.hotKeyQPS, prometheus.GaugeValue, hk.QPS, hk.Key)
			}
		}
	}
}
