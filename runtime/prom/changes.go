package prom

import "github.com/hotkeygen/hotkeygen/runtime"

// changeMetrics are the series of the change buffer and the Bloom filter
// (runtime.ChangeStats, runtime.BloomStats), zero for an entity that has
// them off. They end metrics, and live here beside the code that explains
// them.
var changeMetrics = []metric{
	gauge("changes_pending", "Ids waiting in the change buffer, as this instance's sync worker last saw it (changes=on).",
		func(s *runtime.Stats) float64 { return float64(s.Changes.Pending) }),
	gauge("changes_oldest_age_seconds", "How long the oldest id waiting in the change buffer has waited since it was marked.",
		func(s *runtime.Stats) float64 { return s.Changes.OldestAge.Seconds() }),
	counter("changes_synced", "Changed ids this instance synced to Redis and acknowledged; its rate is the ids synced per second.",
		func(s *runtime.Stats) uint64 { return s.Changes.Synced }),
	counter("changes_sync_failures", "Batches of changed ids whose sync failed (loader, Redis or sync hook) and went back to the buffer.",
		func(s *runtime.Stats) uint64 { return s.Changes.Failures }),
	counter("changes_claims_expired", "Changed ids whose claim lapsed, because the worker holding it died or stalled past sync_lease, and that went back to the buffer.",
		func(s *runtime.Stats) uint64 { return s.Changes.ClaimsExpired }),
	counter("changes_dropped", "Change-buffer members that were not ids of the entity, dropped.",
		func(s *runtime.Stats) uint64 { return s.Changes.Dropped }),
	counter("bloom_checks", "Reads that missed Redis and asked the Bloom filter (bloom=on).",
		func(s *runtime.Stats) uint64 { return s.Bloom.Checks }),
	counter("bloom_absent", "Reads the Bloom filter answered as absent, without a load or a placeholder.",
		func(s *runtime.Stats) uint64 { return s.Bloom.Absent }),
	counter("bloom_unready", "Reads let through because the Bloom filter was not warmed, or lost its bits.",
		func(s *runtime.Stats) uint64 { return s.Bloom.Unready }),
	counter("bloom_adds", "Ids added to the Bloom filter by writes, loads, syncs and warming.",
		func(s *runtime.Stats) uint64 { return s.Bloom.Adds }),
	counter("bloom_errors", "Bloom filter checks and additions that Redis failed; a failed check lets the read through.",
		func(s *runtime.Stats) uint64 { return s.Bloom.Errors }),
}
