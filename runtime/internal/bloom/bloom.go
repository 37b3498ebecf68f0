// Package bloom is the Bloom filter a cache puts in front of its loader,
// its bits kept in Redis.
//
// The filter stands against floods of distinct missing ids: null
// placeholders stop repeated reads of one missing id, but each new one
// would still cost a database query and a placeholder in Redis. Its bits
// live in Redis, so every instance shares them, as plain bitmaps (Redis
// 7.0 has no Bloom commands): a check is one BITFIELD GET of the id's k
// bits, an add one BITFIELD SET, each one round trip.
//
// The bits are split into shards of at most 64 Mbit (8 MiB), each a key of
// its own with its own hash tag, so on a cluster a big filter spreads over
// slots instead of making one big key, and an id's bits are all in its one
// shard, so a check still touches one key. A filter sized for a million ids
// at 1% takes 1.2 MiB: one shard.
//
// The key names hold m and k, so a filter sized differently is a different
// filter, never one read with the wrong layout. Each shard has one more
// bit, past its m: the ready bit, set on every shard once Warm has added
// every id. Until then, or after the bits were lost (a restart without
// persistence, a FLUSHALL), the filter answers "maybe" to every check: it
// can only turn reads away once it has been told every id.
package bloom

import (
	"context"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Client is what the filter needs of a go-redis client: pipelines to
// carry its commands, and one command, once, to learn which bit commands
// the server has.
type Client interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
	Pipeline() redis.Pipeliner
}

// Filter is one entity's Bloom filter. Its methods are safe for
// concurrent use.
type Filter struct {
	rdb    Client
	keys   []string
	bits   uint64 // per shard, the ready bit excluded
	hashes int

	checks, absent, adds, errors, unready atomic.Uint64
	mode                                  atomic.Int32 // bitsUnknown, bitsField or bitsEach
}

// maxShardBits bounds one shard's bitmap (8 MiB).
const maxShardBits = 1 << 26

// New returns the filter of entity sized for n ids at false-positive rate
// p, its bits in the Redis rdb reaches.
func New(rdb Client, entity string, n int, p float64) *Filter {
	m, k := Size(n, p)
	shards := (m + maxShardBits - 1) / maxShardBits
	f := &Filter{rdb: rdb, bits: (m + shards - 1) / shards, hashes: k}
	for i := range shards {
		f.keys = append(f.keys, "hotkeygen:bloom:{"+entity+":"+strconv.FormatUint(m, 10)+"x"+strconv.Itoa(k)+":"+strconv.FormatUint(i, 10)+"}")
	}
	return f
}

// Size returns the bits m and hash functions k of a Bloom filter holding n
// items at false-positive rate p, by the standard formulas
// m = -n·ln p / (ln 2)² and k = (m/n)·ln 2, rounded.
func Size(n int, p float64) (m uint64, k int) {
	bits := math.Ceil(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2))
	if bits > math.MaxInt64/2 {
		return math.MaxInt64 / 2, 1
	}
	m = max(uint64(bits), 64)
	k = max(1, int(math.Round(float64(m)/float64(n)*math.Ln2)))
	return m, k
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

// locate returns the shard of id and the offsets of its k bits, by double
// hashing (Kirsch and Mitzenmacher: bit i is h1 + i·h2 mod m, as good as
// k independent hashes). FNV-1a is in the standard library and the same in
// every process.
func (f *Filter) locate(id string) (string, []uint64) {
	h := fnv.New64a()
	h.Write([]byte(id))
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
func (f *Filter) perBit(ctx context.Context) bool {
	switch f.mode.Load() {
	case bitsField:
		return false
	case bitsEach:
		return true
	}
	err := f.rdb.Do(ctx, "BITFIELD_RO", f.keys[0], "GET", "u1", 0).Err()
	switch {
	case err == nil:
		f.mode.Store(bitsField)
	case strings.Contains(strings.ToLower(err.Error()), "unknown command"):
		f.mode.Store(bitsEach)
		return true
	}
	return false
}

// Op is the commands of one check or addition in a pipeline: one
// BITFIELD, or one GETBIT or SETBIT per bit. A nil Op is the addition of
// a cache without a filter, which never fails.
type Op []redis.Cmder

// bits returns the bits a check read, or the first error.
func (op Op) bits() ([]int64, error) {
	if len(op) == 1 {
		if cmd, ok := op[0].(*redis.IntSliceCmd); ok {
			return cmd.Result()
		}
	}
	out := make([]int64, 0, len(op))
	for _, cmd := range op {
		ic, ok := cmd.(*redis.IntCmd)
		if !ok {
			return nil, fmt.Errorf("a Bloom check got a %T", cmd)
		}
		b, err := ic.Result()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// AddTo queues the addition of id to the filter on pipe; Added tells,
// once pipe ran, whether it failed. A nil filter (a cache without one)
// queues nothing.
func (f *Filter) AddTo(ctx context.Context, pipe redis.Pipeliner, id string) Op {
	if f == nil {
		return nil
	}
	f.adds.Add(1)
	shard, offsets := f.locate(id)
	if f.perBit(ctx) {
		op := make(Op, len(offsets))
		for i, off := range offsets {
			op[i] = pipe.SetBit(ctx, shard, int64(off), 1)
		}
		return op
	}
	args := make([]any, 0, 4*len(offsets))
	for _, off := range offsets {
		args = append(args, "SET", "u1", off, 1)
	}
	return Op{pipe.BitField(ctx, shard, args...)}
}

// Added returns the first error of the addition op, counting it: an id
// whose addition failed may read as absent later, which the caller must
// answer for. A nil op, the addition of a cache without a filter, never
// failed, whatever f.
func (f *Filter) Added(op Op) error {
	for _, cmd := range op {
		if err := cmd.Err(); err != nil {
			f.errors.Add(1)
			return err
		}
	}
	return nil
}

// CheckOn queues a check of id on pipe: the shard's ready bit, then id's
// bits. Verdict reads its answer once pipe ran.
func (f *Filter) CheckOn(ctx context.Context, pipe redis.Pipeliner, id string) Op {
	shard, offsets := f.locate(id)
	all := append([]uint64{f.bits}, offsets...)
	if f.perBit(ctx) {
		op := make(Op, len(all))
		for i, off := range all {
			op[i] = pipe.GetBit(ctx, shard, int64(off))
		}
		return op
	}
	args := make([]any, 0, 2*len(all))
	for _, off := range all {
		args = append(args, "u1", off)
	}
	return Op{pipe.BitFieldRO(ctx, shard, args...)}
}

// Verdict turns the reply of the check op (ready bit first) into its
// answer, counting it: false only when the filter is ready and one of the
// id's bits is clear. A failed check answers true: the filter only ever
// saves work, it never fails a read.
func (f *Filter) Verdict(op Op) bool {
	bits, err := op.bits()
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

// MayHold asks the filter whether id may exist, in one round trip.
// Without a filter (f nil), before it is ready, or when Redis fails, the
// answer is yes.
func (f *Filter) MayHold(ctx context.Context, id string) bool {
	return f.MayHoldMany(ctx, []string{id})[0]
}

// MayHoldMany is MayHold for many ids, in one pipeline.
func (f *Filter) MayHoldMany(ctx context.Context, ids []string) []bool {
	out := make([]bool, len(ids))
	if f == nil {
		for i := range out {
			out[i] = true
		}
		return out
	}
	pipe := f.rdb.Pipeline()
	ops := make([]Op, len(ids))
	for i, id := range ids {
		ops[i] = f.CheckOn(ctx, pipe, id)
	}
	_, _ = pipe.Exec(ctx) // each reply is judged by Verdict
	for i, op := range ops {
		out[i] = f.Verdict(op)
	}
	return out
}

// warmChunk is how many ids one pipeline of Warm adds.
const warmChunk = 1000

// Warm adds every id ids yields, a pipeline per thousand, then marks the
// filter ready: only then does it turn checks of absent ids away. It
// returns how many ids it added; an error says after how many Redis
// failed it.
func (f *Filter) Warm(ctx context.Context, ids iter.Seq[string]) (int, error) {
	queued, added := 0, 0
	pipe := f.rdb.Pipeline()
	flush := func() error {
		if _, err := pipe.Exec(ctx); err != nil {
			f.errors.Add(1)
			return fmt.Errorf("after %d ids: %w", added, err)
		}
		added = queued
		return nil
	}
	for id := range ids {
		f.AddTo(ctx, pipe, id)
		queued++
		if queued-added == warmChunk {
			if err := flush(); err != nil {
				return added, err
			}
		}
	}
	for _, shard := range f.keys {
		pipe.SetBit(ctx, shard, int64(f.bits), 1)
	}
	return queued, flush()
}

// Stats is a snapshot of the filter's counters.
type Stats struct {
	// Checks counts checks; Absent those that found an id certainly
	// absent; Unready those that found the filter not yet warmed.
	Checks, Absent, Unready uint64
	// Adds counts additions queued, Warm's included; Errors checks,
	// additions and Warm's pipelines Redis failed.
	Adds, Errors uint64
}

// Stats returns the filter's counters.
func (f *Filter) Stats() Stats {
	return Stats{
		Checks:  f.checks.Load(),
		Absent:  f.absent.Load(),
		Unready: f.unready.Load(),
		Adds:    f.adds.Load(),
		Errors:  f.errors.Load(),
	}
}
