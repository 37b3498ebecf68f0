package layout

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
)

// MGetChunk bounds the keys of one MGET: a reply of a few hundred values
// keeps Redis's latency for other clients low, and batches of this size
// already make the round trip per key negligible.
const MGetChunk = 500

// String stores each value as a String of msgpack bytes: GET, MGET, SET,
// SET NX and DEL.
type String struct{ base }

// NewString returns the String layout, reading expiries by clock, whose
// reads ask for the keys' TTLs when learnTTL is set.
func NewString(clock Clock, learnTTL bool) *String {
	return &String{base{clock: clock, learnTTL: learnTTL}}
}

// ReadOp is "get".
func (s *String) ReadOp() string { return "get" }

// Read is GET. A key that holds a load's lease holds no value: it reads
// as absent (redis.Nil), as in every read of the layout.
func (s *String) Read(ctx context.Context, snd send.Sender, key string, keep bool) ([]byte, int64, error) {
	get := redis.NewStringCmd(ctx, "get", key)
	return s.read(ctx, snd, key, keep, get, func() ([]byte, error) {
		b, err := get.Bytes()
		if err == nil && lease.Is(b) {
			return nil, redis.Nil
		}
		return b, err
	})
}

// PerRead is MGetChunk: one MGET reads a group.
func (s *String) PerRead() int { return MGetChunk }

// Queue queues one MGET of keys.
func (s *String) Queue(ctx context.Context, pipe redis.Pipeliner, keys []string, keep []bool) *Reply {
	cmd := pipe.MGet(ctx, keys...)
	return &Reply{
		values: func() ([][]byte, error) {
			res, err := cmd.Result()
			if err != nil {
				return nil, err
			}
			vals := make([][]byte, len(res))
			for i, v := range res {
				if str, ok := v.(string); ok && !lease.Is([]byte(str)) {
					vals[i] = []byte(str)
				}
			}
			return vals, nil
		},
		lefts: s.queueTTLs(ctx, pipe, keys, keep),
	}
}

// SetNX is SET NX with ttl.
func (s *String) SetNX(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) (Written, int64) {
	return p.SetNX(ctx, key, b, ttl).Result, WroteExpiry(s.clock.Now(), ttl)
}

// Fill is the lease's own script (lease.Fill).
func (s *String) Fill(ctx context.Context, p redis.Cmdable, _ string, b []byte, ttl time.Duration, ls *lease.Lease) (Written, int64) {
	return ls.Fill(ctx, p, b, ttl), WroteExpiry(s.clock.Now(), ttl)
}

// Set is SET with ttl.
func (s *String) Set(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) redis.Cmder {
	return p.Set(ctx, key, b, ttl)
}
