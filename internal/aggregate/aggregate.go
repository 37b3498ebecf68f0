// Package aggregate is the Redis layout of cluster-wide hot-key counts,
// shared by the runtime, which writes and reads it, and `hotkeygen top`,
// which reads it.
//
// Once per slot of the detection window, every replica adds the counts of
// its busiest keys in the slot just completed to a sorted set named for the
// entity and the slot:
//
//	hotkeygen:agg:<entity>:<slot>
//
// where slot is the absolute slot number, Unix time in nanoseconds divided
// by the slot length. Slot numbers follow the wall clock, so the reports
// of every replica land in the same set without any coordination, as long
// as the replicas agree on the window. Members are Redis keys, scores are
// reads; a set expires two windows after its last report. One member,
// TotalMember, sums every read of the entity in the slot, reported or
// not, so that a key's share is of all reads, not of the few keys each
// replica reported.
//
// A replica's side of the reporting needs no key type either: the slots
// waiting to be reported while a report waits on Redis (Queue, queue.go),
// and whether the last report or read failed (Health, health.go), so an
// outage is logged once. The runtime maps names back to keys itself.
package aggregate

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Prefix starts the name of every set.
const Prefix = "hotkeygen:agg:"

// Slots is the number of slots in a detection window, as the runtime's
// recorder cuts it: a slot lasts a tenth of the window.
const Slots = 10

// Key is the name of entity's set for slot.
func Key(entity string, slot int64) string {
	return Prefix + entity + ":" + strconv.FormatInt(slot, 10)
}

// Parse splits a set's name into its entity and slot. The slot is the part
// after the last colon, so an entity name may hold colons itself.
func Parse(key string) (entity string, slot int64, ok bool) {
	rest, ok := strings.CutPrefix(key, Prefix)
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", 0, false
	}
	slot, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return rest[:i], slot, true
}

// TotalMember is the member holding the replicas' total reads in the slot.
// It is the empty string, which no entity's Redis key can be: every key
// template starts with a literal prefix.
const TotalMember = ""

// Count is one key's reads in one slot.
type Count struct {
	Name string // the Redis key
	N    uint64
}

// Report queues on pipe what one replica sends for one slot: a ZINCRBY per
// count, one for total, its reads of every key in the slot, and a PEXPIRE
// of ttl, len(counts)+2 commands in all. Replicas report the same set, so
// one replica's EXPIRE keeps every replica's counts.
func Report(ctx context.Context, pipe redis.Pipeliner, entity string, slot int64, counts []Count, total uint64, ttl time.Duration) {
	key := Key(entity, slot)
	for _, c := range counts {
		pipe.ZIncrBy(ctx, key, float64(c.N), c.Name)
	}
	pipe.ZIncrBy(ctx, key, float64(total), TotalMember)
	pipe.PExpire(ctx, key, ttl)
}

// Span returns the first and last slot of the latest detection window
// that every replica has reported by now. A replica reports a slot at its
// first tick after the slot ends, up to one slot later, so the slot before
// the current one may still be incomplete: the window ends one slot
// earlier.
func Span(now time.Time, window time.Duration) (first, last int64) {
	last = now.UnixNano()/int64(window/Slots) - 2
	return last - Slots + 1, last
}

// Read sums entity's sets for slots first to last member by member, in one
// pipeline, reading the top keys of each set (every key when top is 0 or
// less); TotalMember is not a key and is left out. A missing set counts as
// empty. On a Redis Cluster the sets live on several nodes, so they are
// read one by one, never combined in Redis (ZUNIONSTORE needs its keys on
// one node).
func Read(ctx context.Context, rdb redis.Cmdable, entity string, first, last int64, top int) (map[string]float64, error) {
	stop := int64(top) // one more than top, for TotalMember
	if top <= 0 {
		stop = -1
	}
	pipe := rdb.Pipeline()
	cmds := make([]*redis.ZSliceCmd, 0, last-first+1)
	for s := first; s <= last; s++ {
		cmds = append(cmds, pipe.ZRevRangeWithScores(ctx, Key(entity, s), 0, stop))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	sums := map[string]float64{}
	for _, cmd := range cmds {
		n := 0
		for _, z := range cmd.Val() {
			if name, ok := z.Member.(string); ok && name != TotalMember && (top <= 0 || n < top) {
				sums[name] += z.Score
				n++
			}
		}
	}
	return sums, nil
}
