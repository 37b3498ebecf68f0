package runtime

import (
	"context"
	"fmt"
	"hash/fnv"
	"iter"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// The Bloom filter stands in front of the loader against floods of
// distinct missing ids: null placeholders stop repeated reads of one
// missing id, but each new one would still cost a database query and a
// placeholder in Redis. Its bits live in Redis, so every instance shares
// them, as plain bitmaps (Redis 7.0 has no Bloom commands): a check is one
// BITFIELD GET of the id's k bits, an add one BITFIELD SET, each one round
// trip.
//
// The bits are split into shards of at most 64 Mbit (8 MiB), each a key of
// its own with its own hash tag, so on a cluster a big filter spreads over
// slots instead of making one big key, and an id's bits are all in its one
// shard, so a check still touches one key. A filter sized for a million ids
// at 1% takes 1.2 MiB: one shard.
//
// The key names hold m and k, so a filter sized differently is a different
// filter, never one read with the wrong layout. Each shard has one more
// bit, past its m: the ready bit, set on every shard once WarmBloom has
// added every id. Until then, or after the bits were lost (a restart
// without persistence, a FLUSHALL), the filter answers "maybe" to every
// check: it can only turn reads away once it has been told every id.
type bloomFilter struct {
	keys   []string
	bits   uint64 // per shard, the ready bit excluded
	hashes int

	checks, absent, adds, errors, unready atomic.Uint64
	mode                                  atomic.Int32 // bitsUnknown, bitsField or bitsEach
}

// maxShardBits bounds one shard's bitmap (8 MiB).
const maxShardBits = 1 << 26

func newBloomFilter(entity string, n int, p float64) *bloomFilter {
	m, k := bloomSize(n, p)
	shards := (m + maxShardBits - 1) / maxShardBits
	f := &bloomFilter{bits: (m + shards - 1) / shards, hashes: k}
	for i := range shards {
		f.keys = append(f.keys, "hotkeygen:bloom:{"+entity+":"+strconv.FormatUint(m, 10)+"x"+strconv.Itoa(k)+":"+strconv.FormatUint(i, 10)+"}")
	}
	return f
}

// mix is SplitMix64's finaliser: FNV-1a alone spreads keys that differ in
// their last byte ("user:1", "user:2") poorly over the low bits.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// locate returns the shard of key and the offsets of its k bits, by double
// hashing (Kirsch and Mitzenmacher: bit i is h1 + i·h2 mod m, as good as
// k independent hashes). FNV-1a is in the standard library and the same in
// every process.
func (f *bloomFilter) locate(key string) (string, []uint64) {
	h := fnv.New64a()
	h.Write([]byte(key))
	h1 := mix(h.Sum64())
	h2 := mix(h1^0x9e3779b97f4a7c15) | 1
	offsets := make([]uint64, f.hashes)
	for i := range offsets {
		offsets[i] = (h1 + uint64(i)*h2) % f.bits
	}
	return f.keys[mix(h2)%uint64(len(f.keys))], offsets
}

// Bit commands. BITFIELD (SET) and BITFIELD_RO (GET) carry all of an id's
// bits in one command. A server without them (Redis before 6.2 lacks
// BITFIELD_RO; the demo's embedded Redis lacks both) gets SETBIT and
// GETBIT instead, k of them pipelined: still one round trip. The first
// use finds out which.
const (
	bitsUnknown int32 = iota
	bitsField
	bitsEach
)

// perBit reports whether the server lacks BITFIELD, asking it the first
// time.
func (c *Cache[K, V]) perBit(ctx context.Context) bool {
	switch c.bloom.mode.Load() {
	case bitsField:
		return false
	case bitsEach:
		return true
	}
	err := c.rdb.Do(ctx, "BITFIELD_RO", c.bloom.keys[0], "GET", "u1", 0).Err()
	switch {
	case err == nil:
		c.bloom.mode.Store(bitsField)
	case strings.Contains(strings.ToLower(err.Error()), "unknown command"):
		c.bloom.mode.Store(bitsEach)
		return true
	}
	return false
}

// bloomOp is the commands of one check or addition in a pipeline: one
// BITFIELD, or one GETBIT or SETBIT per bit.
type bloomOp []redis.Cmder

// bits returns the bits a check read, or the first error.
func (op bloomOp) bits() ([]int64, error) {
	if len(op) == 1 {
		if cmd, ok := op[0].(*redis.IntSliceCmd); ok {
			return cmd.Result()
		}
	}
	out := make([]int64, 0, len(op))
	for _, cmd := range op {
		ic, ok := cmd.(*redis.IntCmd)
		if !ok {
			return nil, fmt.Errorf("%w: a Bloom check got a %T", ErrDecode, cmd)
		}
		b, err := ic.Result()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// err returns the first error of an addition's commands.
func (op bloomOp) err() error {
	for _, cmd := range op {
		if err := cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}

// bloomAddTo queues the addition of key to the filter on pipe; nil without
// a filter.
func (c *Cache[K, V]) bloomAddTo(ctx context.Context, pipe redis.Pipeliner, key string) bloomOp {
	if c.bloom == nil {
		return nil
	}
	c.bloom.adds.Add(1)
	shard, offsets := c.bloom.locate(key)
	if c.perBit(ctx) {
		op := make(bloomOp, len(offsets))
		for i, off := range offsets {
			op[i] = pipe.SetBit(ctx, shard, int64(off), 1)
		}
		return op
	}
	args := make([]any, 0, 4*len(offsets))
	for _, off := range offsets {
		args = append(args, "SET", "u1", off, 1)
	}
	return bloomOp{pipe.BitField(ctx, shard, args...)}
}

// bloomCheckOn queues a check of key on pipe: the shard's ready bit, then
// key's bits.
func (c *Cache[K, V]) bloomCheckOn(ctx context.Context, pipe redis.Pipeliner, key string) bloomOp {
	shard, offsets := c.bloom.locate(key)
	all := append([]uint64{c.bloom.bits}, offsets...)
	if c.perBit(ctx) {
		op := make(bloomOp, len(all))
		for i, off := range all {
			op[i] = pipe.GetBit(ctx, shard, int64(off))
		}
		return op
	}
	args := make([]any, 0, 2*len(all))
	for _, off := range all {
		args = append(args, "u1", off)
	}
	return bloomOp{pipe.BitFieldRO(ctx, shard, args...)}
}

// bloomMayHold asks the filter whether key may exist, in one round trip.
// Without a filter, before it is ready, or when Redis fails, the answer is
// yes: the filter only ever saves work, it never fails a read.
func (c *Cache[K, V]) bloomMayHold(ctx context.Context, key string) bool {
	return c.bloomMayHoldMany(ctx, []string{key})[0]
}

// verdict turns the reply of a check (ready bit first) into its answer,
// counting it.
func (f *bloomFilter) verdict(bits []int64, err error) bool {
	f.checks.Add(1)
	switch {
	case err != nil || len(bits) != f.hashes+1:
		f.errors.Add(1)
		return true
	case bits[0] != 1:
		f.unready.Add(1)
		return true
	}
	for _, b := range bits[1:] {
		if b != 1 {
			f.absent.Add(1)
			return false
		}
	}
	return true
}

// bloomMayHoldMany is bloomMayHold for many keys, in one pipeline.
func (c *Cache[K, V]) bloomMayHoldMany(ctx context.Context, keys []string) []bool {
	out := make([]bool, len(keys))
	if c.bloom == nil {
		for i := range out {
			out[i] = true
		}
		return out
	}
	pipe := c.rdb.Pipeline()
	ops := make([]bloomOp, len(keys))
	for i, key := range keys {
		ops[i] = c.bloomCheckOn(ctx, pipe, key)
	}
	_, _ = pipe.Exec(ctx) // each reply is judged by verdict
	for i, op := range ops {
		out[i] = c.bloom.verdict(op.bits())
	}
	return out
}

// warmChunk is how many ids one pipeline of WarmBloom adds.
const warmChunk = 1000

// WarmBloom adds every id ids yields to the Bloom filter, a pipeline per
// thousand, then marks the filter ready: only then does it turn reads of
// absent ids away. ids should walk every id of the database's table, as
// a query of its primary keys does; rows created after the walk began
// reach the filter when they are written through the repository, loaded,
// or synced from the change buffer. It returns how many ids it added.
func (c *Cache[K, V]) WarmBloom(ctx context.Context, ids iter.Seq[K]) (int, error) {
	if c.closed.Load() {
		return 0, opErr("warm the Bloom filter", "", ErrClosed)
	}
	if c.bloom == nil {
		return 0, fmt.Errorf("hotkey: WarmBloom needs the Bloom filter; annotate the entity with bloom=on, or pass runtime.WithBloom(true)")
	}
	queued, added := 0, 0
	pipe := c.rdb.Pipeline()
	flush := func() error {
		if _, err := pipe.Exec(ctx); err != nil {
			c.bloom.errors.Add(1)
			return fmt.Errorf("hotkey: warm the Bloom filter of %s after %d ids: %w", c.cfg.Entity, added, err)
		}
		added = queued
		return nil
	}
	for k := range ids {
		c.bloomAddTo(ctx, pipe, c.key(k))
		queued++
		if queued-added == warmChunk {
			if err := flush(); err != nil {
				return added, err
			}
		}
	}
	for _, shard := range c.bloom.keys {
		pipe.SetBit(ctx, shard, int64(c.bloom.bits), 1)
	}
	return queued, flush()
}

// bloomSift splits ks into those the filter says may exist, to be loaded,
// and those certainly absent, in one pipeline.
func (c *Cache[K, V]) bloomSift(ctx context.Context, ks []K) (maybe []K, absent map[K]bool) {
	if c.bloom == nil {
		return ks, nil
	}
	keys := make([]string, len(ks))
	for i, k := range ks {
		keys[i] = c.key(k)
	}
	absent = map[K]bool{}
	maybe = ks[:0:0]
	for i, ok := range c.bloomMayHoldMany(ctx, keys) {
		if ok {
			maybe = append(maybe, ks[i])
		} else {
			absent[ks[i]] = true
		}
	}
	return maybe, absent
}
