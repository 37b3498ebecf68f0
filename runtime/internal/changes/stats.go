package changes

import (
	"sync/atomic"
	"time"
)

// counts are a Buffer's gauges, refreshed by every claim, and its
// counters, added to by the claims and by the sync worker.
type counts struct {
	pending  atomic.Int64
	oldestMs atomic.Int64 // mark time of the oldest id waiting, 0: none
	synced   atomic.Uint64
	failures atomic.Uint64
	expired  atomic.Uint64
	dropped  atomic.Uint64
}

// Stats describes a Buffer as this instance last saw it; the runtime
// copies it into its public ChangeStats, which says what each figure means
// to users.
type Stats struct {
	Pending       int64         // ids waiting, claimed ones excluded, at the last claim
	OldestAge     time.Duration // since the oldest of them was marked, 0: none
	Synced        uint64        // ids acknowledged after a sync (CountSynced)
	SyncedPerSec  float64       // their rate over the last minute (SampleRate)
	Failures      uint64        // batches that failed (CountFailure)
	ClaimsExpired uint64        // ids whose claim lapsed and went back to the buffer
	Dropped       uint64        // members that were not ids (CountDropped)
}

// CountSynced counts n ids synced and acknowledged.
func (b *Buffer) CountSynced(n int) { b.counts.synced.Add(uint64(n)) }

// CountFailure counts a batch that failed.
func (b *Buffer) CountFailure() { b.counts.failures.Add(1) }

// CountDropped counts n members that were not ids of the entity, and were
// dropped.
func (b *Buffer) CountDropped(n int) { b.counts.dropped.Add(uint64(n)) }

// SampleRate takes a sample of the ids synced so far, for SyncedPerSec; the
// worker takes one after every step, so an idle minute brings the rate
// down to 0.
func (b *Buffer) SampleRate() { b.rate.add(b.clock.Now(), b.counts.synced.Load()) }

// Stats returns the buffer's figures.
func (b *Buffer) Stats() Stats {
	s := Stats{
		Pending:       b.counts.pending.Load(),
		Synced:        b.counts.synced.Load(),
		SyncedPerSec:  b.rate.perSec(),
		Failures:      b.counts.failures.Load(),
		ClaimsExpired: b.counts.expired.Load(),
		Dropped:       b.counts.dropped.Load(),
	}
	if ms := b.counts.oldestMs.Load(); ms > 0 {
		s.OldestAge = max(0, b.clock.Now().Sub(time.UnixMilli(ms)))
	}
	return s
}
