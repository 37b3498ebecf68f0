package config

import (
	"time"

	"github.com/hotkeygen/hotkeygen/internal/option"
	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
)

// minSyncIntervals is how many sync intervals the change buffer's keys must
// outlive: the design's safety net must never reap a buffer that a worker
// merely skipped a few ticks of.
const minSyncIntervals = 10

// maxBloomBits bounds the Bloom filter's memory in Redis (4 GiB), far above
// any sensible size; a larger one is a typo in bloom_items or bloom_fp.
const maxBloomBits = 1 << 35

// validateChanges checks the change buffer's options: the design's time
// relations, interval < lease < expiry and expiry > ten intervals, and that
// none is written while the buffer is off, where it would do nothing.
func (r *Config) validateChanges() []error {
	errs := option.WrittenWhileOff(r, r.Changes, "the change buffer", "changes=on (WithChanges(true))",
		SyncEvery, SyncBatch, SyncLease, SyncTTL)
	var err error
	switch {
	case r.SyncEvery <= 0 || r.SyncLease < time.Millisecond: // their rows say so
	case r.SyncLease <= r.SyncEvery:
		err = SyncLease.Errorf("%v must be longer than sync_every %v: a claim must outlive the interval, or a live worker's batch returns to the buffer while it works; raise sync_lease, or lower sync_every", r.SyncLease, r.SyncEvery)
	case r.SyncTTL <= r.SyncLease:
		err = SyncTTL.Errorf("%v must be longer than sync_lease %v: the buffer must outlive a claim, or ids return to a buffer that expired; raise sync_ttl", r.SyncTTL, r.SyncLease)
	case r.SyncTTL <= minSyncIntervals*r.SyncEvery:
		err = SyncTTL.Errorf("%v must be longer than %d × sync_every (%v): a buffer must survive a few missed syncs; raise sync_ttl, or lower sync_every", r.SyncTTL, minSyncIntervals, minSyncIntervals*r.SyncEvery)
	}
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

// validateBloom checks the Bloom filter's options.
func (r *Config) validateBloom() []error {
	errs := option.WrittenWhileOff(r, r.Bloom, "the Bloom filter", "bloom=on (WithBloom(true))",
		BloomItems, BloomFP)
	var err error
	switch {
	case r.BloomItems <= 0 || !(r.BloomFP > 0 && r.BloomFP < 1): // their rows say so
	default:
		if m, _ := bloom.Size(r.BloomItems, r.BloomFP); m > maxBloomBits {
			err = BloomItems.Errorf("%d ids at bloom_fp %v need %d MiB of Redis memory, more than the %d MiB allowed; lower bloom_items or raise bloom_fp", r.BloomItems, r.BloomFP, m>>23, maxBloomBits>>23)
		}
	}
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}
