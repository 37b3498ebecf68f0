package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// The change buffer carries the ids of rows changed in the database to the
// cache. Its two keys share a hash tag, so a script may touch both on a
// cluster:
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
type changeBuffer struct {
	buf, claims string

	// Gauges refreshed by every claim, and counters; see Stats.
	pending     atomic.Int64
	oldestMs    atomic.Int64 // mark time of the oldest id waiting, 0: none
	synced      atomic.Uint64
	failures    atomic.Uint64
	expired     atomic.Uint64
	undecodable atomic.Uint64
	rate        syncRate
	lastFailure atomic.Int64 // when a failure was last logged, for rate-limiting
}

// changeKeys returns the buffer's two keys for entity.
func changeKeys(entity string) (buf, claims string) {
	buf = "hotkeygen:changes:{" + entity + "}"
	return buf, buf + ":claims"
}

func newChangeBuffer(entity string) *changeBuffer {
	b := &changeBuffer{}
	b.buf, b.claims = changeKeys(entity)
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

// MarkChanged records that the rows of ks changed in the database, in one
// round trip: the sync worker reloads them and writes them to Redis. An id
// marked several times before it is synced is synced once, after its last
// mark. It needs the change buffer on (changes=on, WithChanges).
func (c *Cache[K, V]) MarkChanged(ctx context.Context, ks ...K) error {
	if c.closed.Load() {
		return opErr("mark changed", "", ErrClosed)
	}
	if c.chg == nil {
		return errors.New("hotkey: MarkChanged needs the change buffer; annotate the entity with changes=on, or pass runtime.WithChanges(true)")
	}
	if len(ks) == 0 {
		return nil
	}
	now := float64(c.cfg.Clock.Now().UnixMilli())
	members := make([]redis.Z, 0, min(len(ks), markChunk))
	pipe := c.rdb.Pipeline()
	for i, k := range ks {
		m, err := msgpack.Marshal(k)
		if err != nil {
			return fmt.Errorf("hotkey: mark %v changed: encode the id: %w", k, err)
		}
		members = append(members, redis.Z{Score: now, Member: m})
		if len(members) == markChunk || i == len(ks)-1 {
			pipe.ZAddNX(ctx, c.chg.buf, members...)
			members = make([]redis.Z, 0, min(len(ks)-i-1, markChunk))
		}
	}
	pipe.PExpire(ctx, c.chg.buf, c.cfg.SyncTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		c.countRedisError(ctx, err)
		return fmt.Errorf("hotkey: mark %d ids of %s changed: %w", len(ks), c.cfg.Entity, err)
	}
	return nil
}

// claim is one batch a worker holds.
type claim struct {
	deadline int64 // ms; the token of the claim
	ids      []string
}

// claimBatch claims up to n ids, refreshing the buffer's gauges.
func (c *Cache[K, V]) claimBatch(ctx context.Context, n int) (claim, error) {
	b := c.chg
	now := c.cfg.Clock.Now().UnixMilli()
	res, err := claimScript.Run(ctx, c.rdb, []string{b.buf, b.claims},
		now, c.cfg.SyncLease.Milliseconds(), n, c.cfg.SyncTTL.Milliseconds(), maxExpiredPerClaim).Slice()
	if err != nil {
		return claim{}, fmt.Errorf("claim: %w", err)
	}
	if len(res) < 4 {
		return claim{}, fmt.Errorf("claim: %w: %d fields in the script's reply", ErrDecode, len(res))
	}
	var cl claim
	d, okD := res[0].(string)
	lapsed, okL := res[1].(int64)
	length, okN := res[2].(int64)
	oldest, okO := res[3].(string)
	if cl.deadline, err = strconv.ParseInt(d, 10, 64); err != nil || !okD || !okL || !okN || !okO {
		return claim{}, fmt.Errorf("claim: %w: unexpected reply %v", ErrDecode, res[:4])
	}
	b.expired.Add(uint64(lapsed))
	b.pending.Store(length)
	b.oldestMs.Store(0)
	if o, err := strconv.ParseFloat(oldest, 64); err == nil {
		b.oldestMs.Store(int64(o))
	}
	for _, r := range res[4:] {
		if s, ok := r.(string); ok {
			cl.ids = append(cl.ids, s)
		}
	}
	return cl, nil
}

// settle acknowledges (release false) or returns (release true) the ids of
// cl that are still cl's own, and reports how many were.
func (c *Cache[K, V]) settle(ctx context.Context, cl claim, ids []string, release bool) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	mode := "ack"
	if release {
		mode = "release"
	}
	args := make([]any, 0, len(ids)+3)
	args = append(args, cl.deadline, mode, c.cfg.SyncLease.Milliseconds())
	for _, id := range ids {
		args = append(args, id)
	}
	n, err := settleScript.Run(ctx, c.rdb, []string{c.chg.buf, c.chg.claims}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", mode, err)
	}
	return n, nil
}

// syncStep is what one step of the sync worker did.
type syncStep struct {
	claimed, synced int
}

// syncOnce is one step of the sync worker: it claims the oldest SyncBatch
// ids, reloads them through the loader, writes each row to Redis through
// the repository's write path (deleting the key of a row that is gone),
// hands the batch to the sync hook, and acknowledges it. A batch that
// fails is returned to the buffer at once, unless ctx ended: a worker
// stopped mid-batch behaves as a dead one, whose claims lapse.
func (c *Cache[K, V]) syncOnce(ctx context.Context) (syncStep, error) {
	cl, err := c.claimBatch(ctx, c.cfg.SyncBatch)
	if err != nil || len(cl.ids) == 0 {
		return syncStep{}, err
	}
	step := syncStep{claimed: len(cl.ids)}
	ks := make([]K, 0, len(cl.ids))
	ids := make([]string, 0, len(cl.ids))
	var junk []string
	for _, id := range cl.ids {
		var k K
		if err := wire.Unmarshal([]byte(id), &k); err != nil { // checked: anyone can write the buffer
			junk = append(junk, id)
			continue
		}
		ks = append(ks, k)
		ids = append(ids, id)
	}
	if len(junk) > 0 {
		// Not an id of this entity (another program wrote it): syncing it
		// again can never succeed, so it is dropped, counted and logged.
		c.chg.undecodable.Add(uint64(len(junk)))
		c.log.Warn("hotkey: dropping change-buffer members that are not ids of the entity", "count", len(junk), "first", fmt.Sprintf("%q", junk[0]))
		if _, err := c.settle(ctx, cl, junk, false); err != nil {
			return step, c.syncFailed(ctx, cl, ids, err)
		}
	}
	if len(ks) == 0 {
		return step, nil
	}
	rows, err := c.loadRows(ctx, ks)
	if err != nil {
		return step, c.syncFailed(ctx, cl, ids, err)
	}
	if now := c.cfg.Clock.Now().UnixMilli(); now >= cl.deadline {
		// The claim lapsed while the rows were read: another worker may
		// hold these ids now, and must be the only one writing them.
		return step, c.syncFailed(ctx, cl, nil, fmt.Errorf("the claim's lease of %v ran out before the batch was written; raise sync_lease or lower sync_batch", c.cfg.SyncLease))
	}
	if err := c.writeSynced(ctx, ks, rows); err != nil {
		return step, c.syncFailed(ctx, cl, ids, err)
	}
	if hook := c.syncHook; hook != nil {
		batch := make(map[K]*V, len(ks))
		for _, k := range ks {
			batch[k] = rows[k]
		}
		if err := c.callHook(ctx, hook, batch); err != nil {
			return step, c.syncFailed(ctx, cl, ids, fmt.Errorf("sync hook: %w", err))
		}
	}
	n, err := c.settle(ctx, cl, ids, false)
	if err != nil {
		return step, c.syncFailed(ctx, cl, nil, err)
	}
	step.synced = n
	c.chg.synced.Add(uint64(n))
	return step, nil
}

// callHook runs the user's hook, turning a panic into an error so one bad
// batch does not take the worker, and the process, down.
func (c *Cache[K, V]) callHook(ctx context.Context, hook func(context.Context, map[K]*V) error, batch map[K]*V) error {
	_, err := unattended(ctx, func() (_ struct{}, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return struct{}{}, hook(ctx, batch)
	})
	return err
}

// syncFailed counts and logs a failed batch and returns its ids (release)
// to the buffer, unless ctx ended: then they are left to lapse. It returns
// the error, wrapped.
func (c *Cache[K, V]) syncFailed(ctx context.Context, cl claim, release []string, err error) error {
	c.chg.failures.Add(1)
	err = fmt.Errorf("hotkey: sync %d changed ids of %s: %w", len(cl.ids), c.cfg.Entity, err)
	if ctx.Err() != nil {
		return err
	}
	if _, rerr := c.settle(ctx, cl, release, true); rerr != nil {
		err = errors.Join(err, rerr)
	}
	now := c.cfg.Clock.Now().UnixMilli()
	if last := c.chg.lastFailure.Load(); now-last >= time.Minute.Milliseconds() && c.chg.lastFailure.CompareAndSwap(last, now) {
		c.log.Warn("hotkey: syncing changed rows failed; the batch returns to the buffer and is retried", "err", err)
	}
	return err
}

// loadRows reads the rows of ks through the batch loader, or the loader id by
// id; an absent row is nil in the result.
func (c *Cache[K, V]) loadRows(ctx context.Context, ks []K) (map[K]*V, error) {
	c.count.loads.Add(1)
	if c.batchLoader != nil {
		rows, err := unattended(ctx, func() (map[K]*V, error) { return c.batchLoader(ctx, ks) })
		if errors.Is(err, errAbandoned) {
			return nil, err
		}
		if err != nil {
			c.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load: %w", err)
		}
		return rows, nil
	}
	rows := make(map[K]*V, len(ks))
	for _, k := range ks {
		v, err := unattended(ctx, func() (*V, error) { return c.loader(ctx, k) })
		switch {
		case errors.Is(err, errAbandoned):
			return nil, err
		case errors.Is(err, ErrNotFound):
		case err != nil:
			c.count.loadErrors.Add(1)
			return nil, fmt.Errorf("load %q: %w", c.key(k), err)
		default:
			rows[k] = v
		}
	}
	return rows, nil
}

// runSync is the sync worker: every SyncEvery it syncs batches until one
// comes back short, so a backlog drains at full speed and an idle buffer
// costs one claim per interval.
func (c *Cache[K, V]) runSync() {
	ticks, stop := c.cfg.Clock.NewTicker(c.cfg.SyncEvery)
	defer stop()
	for {
		select {
		case <-c.done:
			return
		case <-ticks:
		}
		for c.ctx.Err() == nil {
			step, err := c.syncOnce(c.ctx)
			c.chg.rate.add(c.cfg.Clock.Now(), c.chg.synced.Load())
			if err != nil || step.claimed < c.cfg.SyncBatch {
				break
			}
		}
	}
}

// syncRate measures ids synced per second over the last minute, from
// samples the worker takes after every step.
type syncRate struct {
	mu      sync.Mutex
	samples [rateSamples]rateSample
	n       int // samples taken
}

type rateSample struct {
	at    time.Time
	total uint64
}

const rateSamples = 32

func (r *syncRate) add(at time.Time, total uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > 1 && at.Sub(r.samples[(r.n-2)%rateSamples].at) < time.Second {
		// Within a second of the sample before the newest: the newest
		// moves on, so samples stay a second apart and span a minute.
		r.samples[(r.n-1)%rateSamples] = rateSample{at, total}
		return
	}
	r.samples[r.n%rateSamples] = rateSample{at, total}
	r.n++
}

// perSec is the rate between the oldest sample of the last minute and the
// newest.
func (r *syncRate) perSec() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n < 2 {
		return 0
	}
	last := r.samples[(r.n-1)%rateSamples]
	first := last
	for i := r.n - 2; i >= max(0, r.n-rateSamples); i-- {
		s := r.samples[i%rateSamples]
		if last.at.Sub(s.at) > time.Minute {
			break
		}
		first = s
	}
	if d := last.at.Sub(first.at).Seconds(); d > 0 {
		return float64(last.total-first.total) / d
	}
	return 0
}

// setupChanges makes the change buffer and the Bloom filter the
// configuration asks for; both name their Redis keys after the entity.
func (c *Cache[K, V]) setupChanges() error {
	cfg := c.cfg
	if (cfg.Changes || cfg.Bloom) && cfg.Entity == "" {
		return &ConfigError{Option: "changes", Msg: "the change buffer and the Bloom filter name their Redis keys after the entity; pass WithEntity"}
	}
	if cfg.syncHook != nil {
		hook, ok := cfg.syncHook.(func(context.Context, map[K]*V) error)
		if !ok {
			return fmt.Errorf("hotkey: the sync hook is a %T, but this cache needs a func(context.Context, map[%T]*%T) error", cfg.syncHook, *new(K), *new(V))
		}
		c.syncHook = hook
	}
	if cfg.Changes {
		c.chg = newChangeBuffer(cfg.Entity)
	}
	if cfg.Bloom {
		c.bloom = bloom.New(c.rdb, cfg.Entity, cfg.BloomItems, cfg.BloomFP)
	}
	return nil
}

// startSync starts the sync worker when the change buffer is on and there
// is a loader to read rows with. A program that only marks changes, such
// as a binlog reader, needs no loader: workers elsewhere sync them.
func (c *Cache[K, V]) startSync() {
	if c.chg == nil {
		return
	}
	if c.loader == nil && c.batchLoader == nil {
		c.log.Info("hotkey: change buffer without a loader: this repository marks changes, and repositories with a loader sync them")
		return
	}
	c.spawn(c.runSync)
}
