package livepage

import (
	"time"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// Report is the document GET hotkeys.json serves, and what the page shows.
// Its JSON field names are stable.
type Report struct {
	At       time.Time      `json:"at"`       // when the report was made
	Entities []EntityReport `json:"entities"` // one per source, in the order given to Handler
}

// EntityReport is one repository's health and traffic.
//
// Totals count since the repository was made. Rates "per second" without
// more are those of the last second the repository measured: its History's
// newest sample, which the runtime takes once a second on its own clock
// whoever looks, so every reader of the page or the JSON sees the same
// rates and none keeps state between requests; they are 0 until the
// second second. ReadsPerSec alone is over the detection window. The
// totals are there for readers that compute rates over their own
// intervals, as Prometheus does from the same counters (runtime/prom).
type EntityReport struct {
	Entity string `json:"entity"` // the entity's name, e.g. "user"
	// Version is the version of the entity's values this instance reads
	// and writes (version=; docs/changing-structs.md): during a deploy
	// that changed the entity, two instances may differ.
	Version int    `json:"version"`
	Host    string `json:"host"` // the machine this instance runs on
	PID     int    `json:"pid"`  // its process id

	// MemoryShare is the share of the last second's reads, all of them,
	// served from this instance's memory, 0 to 1; null when none was,
	// as when no key is hot.
	MemoryShare *float64 `json:"memory_share"`
	// RedisErrorsPerSec are the Redis commands that failed, and the calls
	// refused without asking Redis because it was unreachable, per second
	// (rate of redis_errors plus failed_fast).
	RedisErrorsPerSec float64 `json:"redis_errors_per_sec"`
	// StaleReadsPerSec are the reads per second answered from a local copy
	// no live invalidation session vouched for, because Redis could not be
	// asked.
	StaleReadsPerSec float64 `json:"stale_reads_per_sec"`
	// RedisDownSince is when Redis was found unreachable; null while it
	// answers.
	RedisDownSince *time.Time `json:"redis_down_since"`
	// Invalidation is the mode in effect: "tracking", "pubsub" or "off".
	Invalidation string `json:"invalidation"`
	// InvalidationConnected says whether writes made anywhere reach this
	// instance's copies now: false with "off", and while a session is
	// lost.
	InvalidationConnected bool `json:"invalidation_connected"`
	// InvalidationDownSince is when a session was lost (or the repository
	// made, while its first connects); null while connected, and with
	// "off".
	InvalidationDownSince *time.Time `json:"invalidation_down_since"`

	ReadsPerSec  float64 `json:"reads_per_sec"` // reads per second over the detection window
	HitRate      float64 `json:"hit_rate"`      // share of the reads of hot keys served locally, 0 to 1
	TrafficShare float64 `json:"traffic_share"` // share of all reads that were of hot keys, 0 to 1
	Reads        uint64  `json:"reads"`         // reads in total
	HotReads     uint64  `json:"hot_reads"`     // reads of hot keys
	Hits         uint64  `json:"hits"`          // reads served locally
	Misses       uint64  `json:"misses"`        // reads of hot keys that went to Redis
	RedisErrors  uint64  `json:"redis_errors"`  // Redis commands that failed
	FailedFast   uint64  `json:"failed_fast"`   // calls refused while Redis was unreachable
	StaleReads   uint64  `json:"stale_reads"`   // reads served from unverified copies
	LocalSize    int     `json:"local_size"`    // values held locally
	LocalBytes   int64   `json:"local_bytes"`   // their encoded size
	Promotions   uint64  `json:"promotions"`    // keys made hot
	Demotions    uint64  `json:"demotions"`     // hot keys that cooled
	// Changes is the change buffer, Bloom the Bloom filter; null when the
	// entity does not have it.
	Changes *ChangesReport `json:"changes"`
	Bloom   *BloomReport   `json:"bloom"`
	// HotKeys are the keys served locally now, highest rate first; empty,
	// never null, when there are none.
	HotKeys []KeyReport `json:"hot_keys"`
	// History is the traffic of the last ten minutes, one point a second,
	// oldest first; empty, never null, until the second second.
	History []PointReport `json:"history"`
}

// ChangesReport is an entity's change buffer (changes=on): what waits in
// Redis for a sync worker, shared by every instance, and what this
// instance's worker did.
type ChangesReport struct {
	Pending       int64   `json:"pending"`           // ids waiting, claimed ones excluded
	OldestSeconds float64 `json:"oldest_seconds"`    // how long the oldest has waited
	Synced        uint64  `json:"synced"`            // ids this instance synced
	SyncedPerSec  float64 `json:"synced_per_sec"`    // over the last minute
	Failures      uint64  `json:"failures"`          // batches that failed and went back
	ClaimsExpired uint64  `json:"claims_expired"`    // claims of dead or stalled workers returned
	Dropped       uint64  `json:"dropped_not_an_id"` // buffer members that were not ids
}

// BloomReport is an entity's Bloom filter (bloom=on).
type BloomReport struct {
	Checks  uint64 `json:"checks"`  // reads that missed Redis and asked it
	Absent  uint64 `json:"absent"`  // of which turned away, no load, no placeholder
	Unready uint64 `json:"unready"` // of which let through: the filter was not warmed
	Adds    uint64 `json:"adds"`    // ids added
	Errors  uint64 `json:"errors"`  // checks and additions Redis failed
}

// KeyReport is one hot key.
type KeyReport struct {
	Key        string    `json:"key"`         // the Redis key
	QPS        float64   `json:"qps"`         // reads per second on this instance
	ClusterQPS float64   `json:"cluster_qps"` // reads per second summed over every replica; 0 unless aggregate=on
	Since      time.Time `json:"since"`       // when it was promoted
	HotSeconds float64   `json:"hot_seconds"` // seconds since it was promoted
	Hits       uint64    `json:"hits"`        // local hits since it was promoted (sampled, exact in expectation)
}

// PointReport is one second of an entity's traffic, per second.
type PointReport struct {
	At          time.Time `json:"at"`           // end of the second
	Reads       float64   `json:"reads"`        // reads
	Hits        float64   `json:"hits"`         // of which served locally
	RedisReads  float64   `json:"redis_reads"`  // of which read from Redis
	RedisErrors float64   `json:"redis_errors"` // Redis errors and calls refused while it was unreachable
	StaleReads  float64   `json:"stale_reads"`  // reads served from unverified copies
}

// NewReport takes a snapshot of sources at now.
func NewReport(now time.Time, sources ...Source) Report {
	rep := Report{At: now, Entities: make([]EntityReport, 0, len(sources))}
	for _, src := range sources {
		rep.Entities = append(rep.Entities, entityReport(now, src.Stats(), src.History()))
	}
	return rep
}

func entityReport(now time.Time, st runtime.Stats, hist []runtime.Sample) EntityReport {
	e := EntityReport{
		Entity:                st.Entity,
		Version:               max(st.Version, 1),
		Host:                  st.Host,
		PID:                   st.PID,
		RedisDownSince:        timeOrNull(st.RedisDownSince),
		Invalidation:          st.Invalidation,
		InvalidationConnected: st.InvalidationConnected(),
		InvalidationDownSince: timeOrNull(st.InvalidationDownSince),
		ReadsPerSec:           st.ReadsPerSec,
		HitRate:               st.HitRate,
		TrafficShare:          st.TrafficShare,
		Reads:                 st.Reads,
		HotReads:              st.HotAccesses,
		Hits:                  st.Hits,
		Misses:                st.Misses,
		RedisErrors:           st.RedisErrors,
		FailedFast:            st.FailedFast,
		StaleReads:            st.StaleReads,
		LocalSize:             st.LocalSize,
		LocalBytes:            st.LocalBytes,
		Promotions:            st.Promotions,
		Demotions:             st.Demotions,
		HotKeys:               make([]KeyReport, 0, len(st.HotKeys)),
		History:               make([]PointReport, 0, len(hist)),
	}
	if c := st.Changes; c.On {
		e.Changes = &ChangesReport{Pending: c.Pending, OldestSeconds: c.OldestAge.Seconds(), Synced: c.Synced, SyncedPerSec: c.SyncedPerSec,
			Failures: c.Failures, ClaimsExpired: c.ClaimsExpired, Dropped: c.Dropped}
	}
	if b := st.Bloom; b.On {
		e.Bloom = &BloomReport{Checks: b.Checks, Absent: b.Absent, Unready: b.Unready, Adds: b.Adds, Errors: b.Errors}
	}
	for _, k := range st.HotKeys {
		e.HotKeys = append(e.HotKeys, KeyReport{
			Key:        k.Key,
			QPS:        k.QPS,
			ClusterQPS: k.ClusterQPS,
			Since:      k.Since,
			HotSeconds: max(0, now.Sub(k.Since).Seconds()),
			Hits:       k.Hits,
		})
	}
	for _, s := range hist {
		e.History = append(e.History, PointReport(s))
	}
	if len(hist) > 0 {
		last := hist[len(hist)-1]
		e.RedisErrorsPerSec, e.StaleReadsPerSec = last.RedisErrors, last.StaleReads
		if last.Hits > 0 && last.Reads > 0 {
			share := min(1, last.Hits/last.Reads)
			e.MemoryShare = &share
		}
	}
	return e
}

func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
