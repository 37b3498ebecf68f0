package layout

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
)

// Hash stores each value, a collection, as a Redis hash of its items
// (HGETALL, a pipeline of HGETALLs, and a script that writes items,
// removes expired ones and moves the hash's TTL in one round trip; see
// writeScript). A value read or written whole is the hash in the
// runtime's form (see AppendItem, ReadItems).
type Hash struct {
	base
	// expires is the msgpack map key of the items' expiry field (the
	// entity's expires=), which the write script reads in the items'
	// bytes; empty when items have no expiry.
	expires string
	// forever is set when items may live for ever (the entity's ttl is
	// 0): a hash without a TTL is then one's.
	forever bool
	// form is how writes keep the items' own expiries (see formFor),
	// asked of the server through probe on the first write that needs
	// to know; nil probe: always the write script's scan.
	form  atomic.Int32
	probe redis.Cmdable
}

// NewHash returns the Hash layout, writing and reading expiries by clock,
// whose reads ask for the keys' TTLs when learnTTL is set. expires is the
// msgpack map key of the items' own expiry (empty: none); forever says
// items without one may live for ever, the entity having no TTL. probe is
// the client asked, once, whether its server expires hash fields itself
// (FieldExpiry); nil keeps the write script's own expiry on any server.
func NewHash(clock Clock, learnTTL bool, expires string, forever bool, probe redis.Cmdable) *Hash {
	return &Hash{base: base{clock: clock, learnTTL: learnTTL}, expires: expires, forever: forever, probe: probe}
}

// ReadOp is "hgetall".
func (h *Hash) ReadOp() string { return "hgetall" }

// Read is HGETALL, in the runtime's form.
func (h *Hash) Read(ctx context.Context, s send.Sender, key string, keep bool) ([]byte, int64, error) {
	cmd := redis.NewMapStringStringCmd(ctx, "hgetall", key)
	return h.read(ctx, s, key, keep, cmd, replyBytes(cmd))
}

// hgetall queues an HGETALL of key on p, and returns what reads its reply
// in the runtime's form.
func hgetall(ctx context.Context, p redis.Cmdable, key string) func() ([]byte, error) {
	return replyBytes(p.HGetAll(ctx, key))
}

// replyBytes returns what reads cmd's reply, an HGETALL's, in the
// runtime's form.
func replyBytes(cmd *redis.MapStringStringCmd) func() ([]byte, error) {
	return func() ([]byte, error) {
		m, err := cmd.Result()
		if err != nil {
			return nil, err
		}
		return hashBytes(m)
	}
}

// PerRead is 1: an HGETALL reads one hash. A pipeline of them, which
// go-redis splits per node on a cluster and sends to the nodes in
// parallel, reads a batch.
func (h *Hash) PerRead() int { return 1 }

// Queue queues an HGETALL of each of keys.
func (h *Hash) Queue(ctx context.Context, pipe redis.Pipeliner, keys []string, keep []bool) *Reply {
	reads := make([]func() ([]byte, error), len(keys))
	for i, key := range keys {
		reads[i] = hgetall(ctx, pipe, key)
	}
	return &Reply{
		values: func() ([][]byte, error) {
			vals := make([][]byte, len(reads))
			for i, read := range reads {
				b, err := read()
				if err != nil && !errors.Is(err, redis.Nil) {
					return nil, err
				}
				vals[i] = b
			}
			return vals, nil
		},
		lefts: h.queueTTLs(ctx, pipe, keys, keep),
	}
}

// SetNX is the write script in its "nx" mode, with the items of b, in the
// runtime's form, or the placeholder of an absent owner for Null. Items
// that carry no expiry of their own keep the hash alive for ttl.
func (h *Hash) SetNX(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) (Written, int64) {
	return h.whole(ctx, p, key, b, ttl, modeNX)
}

// Fill is the write script in its lease mode: SetNX's write, made only
// where the hash holds ls's placeholder alone (lease.HashField), which it
// deletes first; then the end of ls (lease.After). Any write of an item
// since the lease was taken, by the runtime (whose script deletes the
// placeholder) or by another client (which adds a field), wins.
func (h *Hash) Fill(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration, ls *lease.Lease) (Written, int64) {
	done, exp := h.whole(ctx, p, key, b, ttl, modeLease+ls.Placeholder())
	return ls.After(ctx, p, done), exp
}

// whole writes the collection b, whole, in mode (modeNX or a lease's).
func (h *Hash) whole(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration, mode string) (Written, int64) {
	var items []hashWrite
	if bytes.Equal(b, Null) {
		items = []hashWrite{{field: nullField, until: h.until(ttl)}}
	} else {
		err := ReadItems(b, func(field string, exp int64, value []byte) error {
			items = append(items, hashWrite{field: field, value: value, exp: exp, until: h.untilItem(exp, ttl)})
			return nil
		})
		if err != nil {
			return func() (bool, error) { return false, err }, 0
		}
	}
	cmd := h.Run(ctx, p, Write{Key: key, mode: mode, items: items})
	return func() (bool, error) {
		n, err := cmd.Int()
		return n == 1, err
	}, hashExpiry(items)
}

// errWholeSet is the error of Hash.Set.
var errWholeSet = errors.New("a collection is written item by item, never whole")

// Set refuses, with a command already failed: a collection is written
// item by item (SetItems, DelItems), each write keeping the expiries of
// the items it does not touch, and whole only by a loader's write-back
// (SetNX).
func (h *Hash) Set(ctx context.Context, _ redis.Cmdable, key string, _ []byte, _ time.Duration) redis.Cmder {
	cmd := redis.NewStatusCmd(ctx, "set", key)
	cmd.SetErr(errWholeSet)
	return cmd
}

// ReadItem returns the bytes of one item, field of key's hash: HGET,
// redis.Nil when there is none.
func (h *Hash) ReadItem(ctx context.Context, rdb redis.Cmdable, key, field string) ([]byte, error) {
	return rdb.HGet(ctx, key, field).Bytes()
}
