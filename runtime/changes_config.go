package runtime

import (
	"fmt"
	"math"
	"time"
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
	errs := r.writtenWhileOff(r.Changes, "the change buffer", "changes=on (WithChanges(true))",
		namedSetting{setSyncEvery, "sync_every"}, namedSetting{setSyncBatch, "sync_batch"},
		namedSetting{setSyncLease, "sync_lease"}, namedSetting{setSyncTTL, "sync_ttl"})
	bad := func(opt, format string, args ...any) {
		errs = append(errs, &ConfigError{Option: opt, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case r.SyncEvery <= 0:
		bad("sync_every", "must be a positive duration, got %v", r.SyncEvery)
	case r.SyncLease < time.Millisecond:
		bad("sync_lease", "must be at least 1ms (Redis keeps milliseconds), got %v", r.SyncLease)
	case r.SyncLease <= r.SyncEvery:
		bad("sync_lease", "%v must be longer than sync_every %v: a claim must outlive the interval, or a live worker's batch returns to the buffer while it works; raise sync_lease, or lower sync_every", r.SyncLease, r.SyncEvery)
	case r.SyncTTL <= r.SyncLease:
		bad("sync_ttl", "%v must be longer than sync_lease %v: the buffer must outlive a claim, or ids return to a buffer that expired; raise sync_ttl", r.SyncTTL, r.SyncLease)
	case r.SyncTTL <= minSyncIntervals*r.SyncEvery:
		bad("sync_ttl", "%v must be longer than %d × sync_every (%v): a buffer must survive a few missed syncs; raise sync_ttl, or lower sync_every", r.SyncTTL, minSyncIntervals, minSyncIntervals*r.SyncEvery)
	}
	if r.SyncBatch <= 0 {
		bad("sync_batch", "must be positive, got %d", r.SyncBatch)
	}
	return errs
}

// validateBloom checks the Bloom filter's options.
func (r *Config) validateBloom() []error {
	errs := r.writtenWhileOff(r.Bloom, "the Bloom filter", "bloom=on (WithBloom(true))",
		namedSetting{setBloomItems, "bloom_items"}, namedSetting{setBloomFP, "bloom_fp"})
	bad := func(opt, format string, args ...any) {
		errs = append(errs, &ConfigError{Option: opt, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case r.BloomItems <= 0:
		bad("bloom_items", "must be positive, got %d", r.BloomItems)
	case !(r.BloomFP > 0 && r.BloomFP < 1):
		bad("bloom_fp", "must be a fraction between 0 and 1, as in 0.01 or 1%%, got %v", r.BloomFP)
	default:
		if m, _ := bloomSize(r.BloomItems, r.BloomFP); m > maxBloomBits {
			bad("bloom_items", "%d ids at bloom_fp %v need %d MiB of Redis memory, more than the %d MiB allowed; lower bloom_items or raise bloom_fp", r.BloomItems, r.BloomFP, m>>23, maxBloomBits>>23)
		}
	}
	return errs
}

// namedSetting is a setting and its annotation option's name.
type namedSetting struct {
	s   setting
	opt string
}

// writtenWhileOff reports each of opts that was written although the
// feature they tune is off, where it would do nothing.
func (r *Config) writtenWhileOff(on bool, feature, turnOn string, opts ...namedSetting) []error {
	var errs []error
	for _, o := range opts {
		if !on && r.isWritten(o.s) {
			errs = append(errs, &ConfigError{Option: o.opt, Msg: fmt.Sprintf("applies only to %s, which is off; add %s, or remove %s", feature, turnOn, o.opt)})
		}
	}
	return errs
}

// bloomSize returns the bits m and hash functions k of a Bloom filter
// holding n items at false-positive rate p, by the standard formulas
// m = -n·ln p / (ln 2)² and k = (m/n)·ln 2, rounded.
func bloomSize(n int, p float64) (m uint64, k int) {
	bits := math.Ceil(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2))
	if bits > math.MaxInt64/2 {
		return math.MaxInt64 / 2, 1
	}
	m = max(uint64(bits), 64)
	k = max(1, int(math.Round(float64(m)/float64(n)*math.Ln2)))
	return m, k
}
