package engine

import (
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/changes"
)

// ChangeStats describes the change buffer, as this instance's sync worker
// last saw it: the gauges are refreshed by every claim, every SyncEvery.
type ChangeStats struct {
	// On says the entity has the change buffer (changes=on).
	On bool
	// Pending is the number of ids waiting in the buffer, claimed ones
	// excluded; OldestAge how long the oldest of them has waited since it
	// was marked.
	Pending   int64
	OldestAge time.Duration
	// Synced counts ids this instance synced and acknowledged;
	// SyncedPerSec is their rate over the last minute.
	Synced       uint64
	SyncedPerSec float64
	// Failures counts batches that failed (the loader, Redis, the sync
	// hook) and went back to the buffer.
	Failures uint64
	// ClaimsExpired counts ids whose claim lapsed, because the worker that
	// held it died or stalled past sync_lease, and that returned to the
	// buffer.
	ClaimsExpired uint64
	// Dropped counts buffer members that were not ids of the entity.
	Dropped uint64
}

// BloomStats describes the Bloom filter in front of the loader.
type BloomStats struct {
	// On says the entity has the Bloom filter (bloom=on).
	On bool
	// Checks counts reads that missed Redis and asked the filter; Absent
	// those it turned away, without a load or a placeholder; Unready
	// those it let through because it has not been warmed (WarmBloom).
	Checks, Absent, Unready uint64
	// Adds counts ids added by writes, loads and syncs (WarmBloom's
	// included); Errors checks and additions Redis failed.
	Adds, Errors uint64
}

// changeStats fills st's Changes and Bloom from the change buffer chg
// and the Bloom filter bf, either of which may be nil (off).
func changeStats(st *Stats, chg *changes.Buffer, bf *bloom.Filter) {
	if b := chg; b != nil {
		s := b.Stats()
		st.Changes = ChangeStats{
			On:            true,
			Pending:       s.Pending,
			OldestAge:     s.OldestAge,
			Synced:        s.Synced,
			SyncedPerSec:  s.SyncedPerSec,
			Failures:      s.Failures,
			ClaimsExpired: s.ClaimsExpired,
			Dropped:       s.Dropped,
		}
	}
	if bf != nil {
		f := bf.Stats()
		st.Bloom = BloomStats{
			On:      true,
			Checks:  f.Checks,
			Absent:  f.Absent,
			Unready: f.Unready,
			Adds:    f.Adds,
			Errors:  f.Errors,
		}
	}
}
