// Package changes is the change buffer: the ids of rows changed in the
// database, kept in Redis until a sync worker has reloaded them and
// written them to Redis. It knows ids only as the bytes the runtime
// encodes them to, so it needs neither the entity's key type nor its
// value type; its sync worker (Worker), given the repository's loader,
// write path and hook, drives it through Claim and Settle.
package changes

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Buffer carries the ids of rows changed in the database to the cache.
// Its two keys share a hash tag, so a script may touch both on a cluster:
//
//	hotkeygen:changes:{user}         ZSET id → time of its first unsynced mark
//	hotkeygen:changes:{user}:claims  ZSET id → deadline of the claim on it
//
// A sorted set, as in the design this follows, because it removes
// duplicates (an id changed a thousand times is synced once) and keeps
// order (the oldest change is synced first); a Set has no order, a List no
// deduplication, and a Hash neither order nor a cheap "oldest n".
//
// The design's naive worker, ZRANGE the oldest batch, sync it, ZREM it, has
// two holes, both closed here:
//
//   - Two workers can take the same batch. Here a claim is one script that
//     moves the oldest ids not claimed already from the buffer to the claims
//     set, with a deadline: no other worker can take an id while its claim
//     holds.
//   - An id changed again while its batch is synced is removed by the
//     ZREM afterwards, though the row the worker read may predate the
//     change: that change is lost. Here a claimed id has left the buffer, so
//     a new mark puts it back in, and the acknowledgement removes only the
//     claim. The id is claimed again once the claim is gone, so it is synced
//     after its last mark, and never by two workers at once.
//
// A claim's deadline is its owner's token: an id can be claimed again only
// after its deadline has passed, and the new deadline lies a lease further,
// so two claims of one id never share a deadline. Acknowledging removes an
// id's claim only if the deadline is still the worker's own; a worker that
// dies leaves its claims to pass their deadlines, and the next claim by any
// worker moves them back into the buffer, first in line.
//
// Times are the workers' clocks, in milliseconds: the lease (60 s) dwarfs
// any sane skew between machines.
type Buffer struct {
	rdb         redis.UniversalClient
	clock       Clock
	lease, ttl  time.Duration
	buf, claims string

	// Gauges refreshed by every claim, and counters; see Stats.
	counts counts
	rate   rate
}

// Clock is the source of the times a Buffer writes: marks, and claims'
// deadlines. The runtime passes its own, tests a manual one.
type Clock interface {
	Now() time.Time
}

// Options are what a Buffer needs besides its client and entity.
type Options struct {
	// Lease is how long a claim holds before another worker may take its
	// ids (sync_lease).
	Lease time.Duration
	// TTL is the keys' expiry, the buffer's renewed by every mark and
	// both by every claim: the safety net that reaps the buffer of an
	// entity no one syncs any more (sync_ttl).
	TTL time.Duration
	// Clock is the runtime's, so marks and deadlines follow its time.
	Clock Clock
}

// Keys returns the buffer's two keys for entity. They live in Redis, where
// every instance of every version of a program must find them: never
// change them.
func Keys(entity string) (buf, claims string) {
	buf = "hotkeygen:changes:{" + entity + "}"
	return buf, buf + ":claims"
}

// New returns the change buffer of entity in rdb.
func New(rdb redis.UniversalClient, entity string, o Options) *Buffer {
	b := &Buffer{rdb: rdb, clock: o.Clock, lease: o.Lease, ttl: o.TTL}
	b.buf, b.claims = Keys(entity)
	return b
}

// maxExpiredPerClaim bounds how many lapsed claims one claim returns to the
// buffer, so the script stays short whatever died; the next claim goes on.
const maxExpiredPerClaim = 10000

// claimScript returns lapsed claims to the buffer, then claims the oldest
// ARGV[3] ids not claimed already, until ARGV[1]+ARGV[2], and renews both
// keys' expiry. It returns the deadline, how many claims had lapsed, the
// buffer's length, the mark time of its oldest id ("" when empty), then the
// ids claimed.
var claimScript = redis.NewScript(`
local now, lease, n, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local lapsed = redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[5]))
for _, id in ipairs(lapsed) do
  local d = tonumber(redis.call('ZSCORE', KEYS[2], id))
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZADD', KEYS[1], 'LT', d - lease, id)
end
local held = redis.call('ZCARD', KEYS[2])
local deadline = now + lease
local got = {}
if n > 0 then
  local cand = redis.call('ZRANGE', KEYS[1], 0, n + held - 1)
  for _, id in ipairs(cand) do
    if #got >= n then break end
    if not redis.call('ZSCORE', KEYS[2], id) then
      got[#got + 1] = id
    end
  end
  for _, id in ipairs(got) do
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZADD', KEYS[2], deadline, id)
  end
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local out = {tostring(deadline), #lapsed, redis.call('ZCARD', KEYS[1]), oldest[2] or ''}
for _, id in ipairs(got) do out[#out + 1] = id end
return out
`)

// settleScript ends a worker's claims on the ids ARGV[3:], those whose
// deadline is still ARGV[1]: it removes them, and with ARGV[2] "release"
// (a batch that failed) puts them back at the buffer's front, as a lapsed
// claim would be. It returns how many it settled.
var settleScript = redis.NewScript(`
local deadline, release, lease = tonumber(ARGV[1]), ARGV[2] == 'release', tonumber(ARGV[3])
local n = 0
for i = 4, #ARGV do
  local s = redis.call('ZSCORE', KEYS[2], ARGV[i])
  if s and tonumber(s) == deadline then
    redis.call('ZREM', KEYS[2], ARGV[i])
    if release then redis.call('ZADD', KEYS[1], 'LT', deadline - lease, ARGV[i]) end
    n = n + 1
  end
end
return n
`)

// markChunk bounds the ids of one ZADD, so a huge call does not build one
// huge command; the chunks still travel in one round trip.
const markChunk = 10000

// Mark records that the rows of ids changed, in one round trip, and
// renews the buffer's expiry. An id already waiting keeps the time of its
// first mark, and so its place in line; an id claimed by a worker waits
// again, to be synced after this mark.
func (b *Buffer) Mark(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	now := float64(b.clock.Now().UnixMilli())
	members := make([]redis.Z, 0, min(len(ids), markChunk))
	pipe := b.rdb.Pipeline()
	for i, id := range ids {
		members = append(members, redis.Z{Score: now, Member: id})
		if len(members) == markChunk || i == len(ids)-1 {
			pipe.ZAddNX(ctx, b.buf, members...)
			members = make([]redis.Z, 0, min(len(ids)-i-1, markChunk))
		}
	}
	pipe.PExpire(ctx, b.buf, b.ttl)
	_, err := pipe.Exec(ctx)
	return err
}

// Claim is one batch a worker holds.
type Claim struct {
	// IDs are the ids claimed, oldest mark first.
	IDs      []string
	deadline int64 // ms; the token of the claim
}

// Lapsed reports whether the claim's lease has run out at now: another
// worker may hold its ids then, and must be the only one writing them.
func (c Claim) Lapsed(now time.Time) bool {
	return now.UnixMilli() >= c.deadline
}

// Claim claims up to n ids, first returning the lapsed claims of any
// worker to the buffer, and refreshes the buffer's gauges (see Stats).
func (b *Buffer) Claim(ctx context.Context, n int) (Claim, error) {
	now := b.clock.Now().UnixMilli()
	res, err := claimScript.Run(ctx, b.rdb, []string{b.buf, b.claims},
		now, b.lease.Milliseconds(), n, b.ttl.Milliseconds(), maxExpiredPerClaim).Slice()
	if err != nil {
		return Claim{}, fmt.Errorf("claim: %w", err)
	}
	if len(res) < 4 {
		return Claim{}, fmt.Errorf("claim: %d fields in the script's reply", len(res))
	}
	var cl Claim
	d, okD := res[0].(string)
	lapsed, okL := res[1].(int64)
	length, okN := res[2].(int64)
	oldest, okO := res[3].(string)
	if cl.deadline, err = strconv.ParseInt(d, 10, 64); err != nil || !okD || !okL || !okN || !okO {
		return Claim{}, fmt.Errorf("claim: unexpected reply %v", res[:4])
	}
	b.counts.expired.Add(uint64(lapsed))
	b.counts.pending.Store(length)
	b.counts.oldestMs.Store(0)
	if o, err := strconv.ParseFloat(oldest, 64); err == nil {
		b.counts.oldestMs.Store(int64(o))
	}
	for _, r := range res[4:] {
		if s, ok := r.(string); ok {
			cl.IDs = append(cl.IDs, s)
		}
	}
	return cl, nil
}

// Settle acknowledges (release false) or returns (release true) the ids of
// cl that are still cl's own, and reports how many were. A returned id
// goes back to the buffer's front, as a lapsed claim's would.
func (b *Buffer) Settle(ctx context.Context, cl Claim, ids []string, release bool) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	mode := "ack"
	if release {
		mode = "release"
	}
	args := make([]any, 0, len(ids)+3)
	args = append(args, cl.deadline, mode, b.lease.Milliseconds())
	for _, id := range ids {
		args = append(args, id)
	}
	n, err := settleScript.Run(ctx, b.rdb, []string{b.buf, b.claims}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", mode, err)
	}
	return n, nil
}
