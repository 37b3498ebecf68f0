package layout

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
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
}

// NewHash returns the Hash layout, writing and reading expiries by clock,
// whose reads ask for the keys' TTLs when learnTTL is set. expires is the
// msgpack map key of the items' own expiry (empty: none); forever says
// items without one may live for ever, the entity having no TTL.
func NewHash(clock Clock, learnTTL bool, expires string, forever bool) *Hash {
	return &Hash{base: base{clock: clock, learnTTL: learnTTL}, expires: expires, forever: forever}
}

// ReadOp is "hgetall".
func (h *Hash) ReadOp() string { return "hgetall" }

// Read is HGETALL, in the runtime's form.
func (h *Hash) Read(ctx context.Context, rdb redis.Cmdable, key string) ([]byte, int64, error) {
	return h.read(ctx, rdb, key, func(p redis.Cmdable) func() ([]byte, error) {
		return hgetall(ctx, p, key)
	})
}

// hgetall queues an HGETALL of key on p, and returns what reads its reply
// in the runtime's form.
func hgetall(ctx context.Context, p redis.Cmdable, key string) func() ([]byte, error) {
	cmd := p.HGetAll(ctx, key)
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
func (h *Hash) Queue(ctx context.Context, pipe redis.Pipeliner, keys []string) *Reply {
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
		lefts: h.queueTTLs(ctx, pipe, keys),
	}
}

// SetNX is the write script in its "nx" mode, with the items of b, in the
// runtime's form, or the placeholder of an absent owner for Null. Items
// that carry no expiry of their own keep the hash alive for ttl.
func (h *Hash) SetNX(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) (Written, int64) {
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
	cmd := h.Run(ctx, p, Write{Key: key, args: h.args(modeNX, items)})
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

// Item is one item a write sets: its field, its msgpack, and its own
// expiry (Unix milliseconds; 0 for none).
type Item struct {
	Field string
	Value []byte
	Exp   int64
}

// Write is one run of the write script on the hash at Key, made by
// SetItems or DelItems and sent by Run or RunMany.
type Write struct {
	Key  string
	args []any
}

// SetItems is the write of items to key's hash. Items that carry no
// expiry of their own keep the hash alive for ttl (0: for ever).
func (h *Hash) SetItems(key string, items []Item, ttl time.Duration) Write {
	ws := make([]hashWrite, len(items))
	for i, it := range items {
		ws[i] = hashWrite{field: it.Field, value: it.Value, exp: it.Exp, until: h.untilItem(it.Exp, ttl)}
	}
	return Write{Key: key, args: h.args(modeSet, ws)}
}

// DelItems is the deletion of fields from key's hash.
func (h *Hash) DelItems(key string, fields []string) Write {
	ws := make([]hashWrite, len(fields))
	for i, f := range fields {
		ws[i] = hashWrite{field: f}
	}
	return Write{Key: key, args: h.args(modeDel, ws)}
}

// Run runs w on p: EVALSHA, falling back to EVAL, on the client; EVAL in
// a pipeline, whose replies come too late for the fallback.
func (h *Hash) Run(ctx context.Context, p redis.Cmdable, w Write) *redis.Cmd {
	if _, pipelined := p.(redis.Pipeliner); pipelined {
		return writeScript.Eval(ctx, p, []string{w.Key}, w.args...)
	}
	return writeScript.Run(ctx, p, []string{w.Key}, w.args...)
}

// RunMany runs ws on rdb in one pipeline of EVALSHAs, the script's body
// sent only to the nodes that answer NOSCRIPT, in a second pipeline of
// EVALs: a batch of many owners does not carry the script once per
// owner. It returns each write's reply, aligned with ws.
func (h *Hash) RunMany(ctx context.Context, rdb redis.Cmdable, ws []Write) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(ws))
	pipe := rdb.Pipeline()
	for i, w := range ws {
		cmds[i] = writeScript.EvalSha(ctx, pipe, []string{w.Key}, w.args...)
	}
	pipe.Exec(ctx) // errors are each command's, read by the caller
	var again []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		pipe := rdb.Pipeline()
		for _, i := range again {
			cmds[i] = writeScript.Eval(ctx, pipe, []string{ws[i].Key}, ws[i].args...)
		}
		pipe.Exec(ctx)
	}
	return cmds
}

// hashWrite is one field the write script sets: its value, its own
// expiry (exp, Unix milliseconds; 0 for none) and how long the hash must
// live for it (until, Unix milliseconds; 0 for ever).
type hashWrite struct {
	field string
	value []byte
	exp   int64
	until int64
}

// The modes of the write script.
const (
	modeSet = "set" // write the items
	modeNX  = "nx"  // write the items unless the hash exists: a loader's write-back
	modeDel = "del" // delete the fields
)

// until is the Unix millisecond at which something written now with ttl
// expires, or 0 for a ttl of 0: for ever.
func (h *Hash) until(ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return h.clock.Now().Add(ttl).UnixMilli()
}

// untilItem is how long the hash must live for an item expiring at exp
// (Unix milliseconds, 0 for none): until its expiry, or ttl when it has
// none.
func (h *Hash) untilItem(exp int64, ttl time.Duration) int64 {
	if exp > 0 {
		return exp
	}
	return h.until(ttl)
}

// hashExpiry is the expiry of a copy of a hash the write script created
// with items, as ExpiresAt: the script sets the latest of their "until"s
// (PEXPIREAT, which Redis holds through that millisecond), or none when
// one item lives for ever.
func hashExpiry(items []hashWrite) int64 {
	var latest int64
	for _, it := range items {
		if it.until == 0 {
			return 0
		}
		latest = max(latest, it.until)
	}
	return latest * int64(time.Millisecond)
}

// args are the script's ARGV for items: the time, the mode, the flags,
// the msgpack key of the items' expiry, then four values per item
// (field, value, exp, until), or the fields alone for modeDel.
func (h *Hash) args(mode string, items []hashWrite) []any {
	flags := ""
	if h.expires != "" {
		flags += "i"
	}
	if h.forever {
		flags += "f" // items may live for ever: a hash without a TTL is one's
	}
	args := make([]any, 0, 4+4*len(items))
	args = append(args, h.clock.Now().UnixMilli(), mode, flags, h.expires)
	for _, it := range items {
		if mode == modeDel {
			args = append(args, it.field)
			continue
		}
		args = append(args, it.field, it.value, strconv.FormatInt(it.exp, 10), strconv.FormatInt(it.until, 10))
	}
	return args
}
