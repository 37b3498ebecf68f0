package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file is the one place that knows how a Cache's values sit in Redis:
// a String per key (GET, MGET, SET NX), or, for a collection, a hash per
// owner (HGETALL, a pipeline of HGETALLs, and a script that writes items,
// removes expired ones and moves the hash's TTL in one round trip). Every
// other part of the runtime (detection, local copies, freshness,
// refresh, loaders, stats) handles a collection as one value: the bytes
// of its hash, in the form below.
//
// The runtime's form of a hash is a sequence of items, each a uvarint
// length and the field name, a varint expiry in Unix milliseconds (0:
// none or unknown), a uvarint length and the item's msgpack. Items read
// from Redis are sorted by field, so the same hash always gives the same
// bytes, whose hash the refresh compares (reverify). The expiry is only
// set on the way to Redis, where the script records it.

// Field names of a collection's hash that hold no item. Item fields are
// key parts, escaped with AppendKeyString, where '%' is always followed
// by two upper-case hex digits: a '%' and a lower-case letter can never
// name an item.
const (
	// expiriesField holds the expiry of every item that has one, as a
	// msgpack map of field to Unix milliseconds, so a write finds the
	// expired items without decoding any item.
	expiriesField = "%expiries"
	// nullField marks an owner the loader reported absent, as nullValue
	// does for a String.
	nullField = "%null"
)

// hashStore is how a collection's Cache stores values as hashes.
type hashStore struct {
	// indexed records item expiries in expiriesField: the entity has an
	// expires= field.
	indexed bool
}

// readRaw reads the bytes of key: GET, or HGETALL in the runtime's form.
// An absent key is redis.Nil either way.
func (c *Cache[K, V]) readRaw(ctx context.Context, key string) ([]byte, error) {
	if c.hash == nil {
		return c.rdb.Get(ctx, key).Bytes()
	}
	m, err := c.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	return hashBytes(m)
}

// hgetallMany is mget for collections: one HGETALL per key, all in one
// pipeline, which go-redis splits per node on a cluster and sends to the
// nodes in parallel.
func (c *Cache[K, V]) hgetallMany(ctx context.Context, keys []string) ([][]byte, []error) {
	vals := make([][]byte, len(keys))
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(keys))
		}
		errs[i] = fmt.Errorf("hotkey: hgetall %q: %w", keys[i], err)
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	nodes := make([]*node, len(keys))
	for i, key := range keys {
		if nodes[i] = c.nodes.of(key); !nodes[i].unreachable() {
			cmds[i] = pipe.HGetAll(ctx, key)
		}
	}
	if pipe.Len() > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			c.count.redisErrors.Add(1)
		}
	}
	for i, cmd := range cmds {
		if cmd == nil {
			fail(i, c.refuse(nodes[i], "hgetall", keys[i]))
			continue
		}
		m, err := cmd.Result()
		if err != nil {
			c.failed(nodes[i], err)
			fail(i, err)
			continue
		}
		if vals[i], err = hashBytes(m); err != nil && !errors.Is(err, redis.Nil) {
			fail(i, err)
		}
	}
	return vals, errs
}

// hashBytes turns an HGETALL reply into the runtime's form: redis.Nil for
// a hash without items, nullValue for the placeholder of an absent owner.
func hashBytes(m map[string]string) ([]byte, error) {
	if _, ok := m[nullField]; ok {
		return nullValue, nil
	}
	fields := make([]string, 0, len(m))
	size := 0
	for f, v := range m {
		if reserved(f) {
			continue
		}
		fields = append(fields, f)
		size += len(f) + len(v) + 2*binary.MaxVarintLen32 + 1
	}
	if len(fields) == 0 {
		return nil, redis.Nil
	}
	slices.Sort(fields)
	b := make([]byte, 0, size)
	for _, f := range fields {
		b = appendHashItem(b, f, 0, []byte(m[f]))
	}
	return b, nil
}

// reserved reports a field of a collection's hash that holds no item.
func reserved(field string) bool {
	return len(field) > 1 && field[0] == '%' && 'a' <= field[1] && field[1] <= 'z'
}

// appendHashItem appends one item in the runtime's form.
func appendHashItem(b []byte, field string, exp int64, value []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(field)))
	b = append(b, field...)
	b = binary.AppendVarint(b, exp)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}

// errHashForm reports bytes not in the runtime's form; they never come
// from Redis, which the runtime reads through hashBytes.
var errHashForm = errors.New("hotkey: malformed collection bytes")

// readHashItems calls each for every item of b, in the runtime's form,
// checking every length against the bytes left.
func readHashItems(b []byte, each func(field string, exp int64, value []byte) error) error {
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return errHashForm
		}
		field := string(b[w : w+int(n)])
		b = b[w+int(n):]
		exp, w := binary.Varint(b)
		if w <= 0 {
			return errHashForm
		}
		b = b[w:]
		n, w = binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return errHashForm
		}
		if err := each(field, exp, b[w:w+int(n)]); err != nil {
			return err
		}
		b = b[w+int(n):]
	}
	return nil
}

// setNX writes b under key unless key exists, on p (the client, or a
// pipeline whose Exec comes before the returned func is called), and
// reports whether it did: SET NX, or for a collection the write script in
// its "nx" mode. ttl is the expiry of a String, and of the items of a
// collection that carry none of their own.
func (c *Cache[K, V]) setNX(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) func() (bool, error) {
	if c.hash == nil {
		return p.SetNX(ctx, key, b, ttl).Result
	}
	var args []any
	if bytes.Equal(b, nullValue) {
		args = c.hashArgs(modeNX, []hashWrite{{field: nullField, until: c.until(ttl)}})
	} else {
		var items []hashWrite
		err := readHashItems(b, func(field string, exp int64, value []byte) error {
			items = append(items, hashWrite{field: field, value: value, exp: exp, until: c.untilItem(exp, ttl)})
			return nil
		})
		if err != nil {
			return func() (bool, error) { return false, err }
		}
		args = c.hashArgs(modeNX, items)
	}
	cmd := c.runWrite(ctx, p, key, args)
	return func() (bool, error) {
		n, err := cmd.Int()
		return n == 1, err
	}
}

// landed reports whether a write-back queued with setNX wrote.
func landed(done func() (bool, error)) bool {
	ok, err := done()
	return ok && err == nil
}

// hashWrite is one field the write script sets: its value, the expiry
// recorded in expiriesField (exp, 0 for none) and how long the hash must
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
func (c *Cache[K, V]) until(ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return c.cfg.Clock.Now().Add(ttl).UnixMilli()
}

// untilItem is how long the hash must live for an item expiring at exp
// (Unix milliseconds, 0 for none): until its expiry, or the entity's ttl
// when it has none.
func (c *Cache[K, V]) untilItem(exp int64, ttl time.Duration) int64 {
	if exp > 0 {
		return exp
	}
	return c.until(ttl)
}

// hashArgs are the script's ARGV for items: the time, the mode, the
// flags, then four values per item (field, value, exp, until), or the
// fields alone for modeDel.
func (c *Cache[K, V]) hashArgs(mode string, items []hashWrite) []any {
	flags := ""
	if c.hash.indexed {
		flags += "i"
	}
	if c.cfg.TTL == 0 {
		flags += "f" // items may live for ever: a hash without a TTL is one's
	}
	args := make([]any, 0, 3+4*len(items))
	args = append(args, c.cfg.Clock.Now().UnixMilli(), mode, flags)
	for _, it := range items {
		if mode == modeDel {
			args = append(args, it.field)
			continue
		}
		args = append(args, it.field, it.value, strconv.FormatInt(it.exp, 10), strconv.FormatInt(it.until, 10))
	}
	return args
}

// runWrite runs the write script for key on p: EVALSHA, falling back to
// EVAL, on the client; EVAL in a pipeline, whose replies come too late for
// the fallback.
func (c *Cache[K, V]) runWrite(ctx context.Context, p redis.Cmdable, key string, args []any) *redis.Cmd {
	if _, pipelined := p.(redis.Pipeliner); pipelined {
		return writeScript.Eval(ctx, p, []string{key}, args...)
	}
	return writeScript.Run(ctx, p, []string{key}, args...)
}

// writeScript writes or deletes items of one collection's hash in one
// round trip, and keeps its two layers of expiry:
//
//   - with flag i (the entity has expires=), every item whose expiry has
//     passed, as recorded in expiriesField, is deleted first, and each
//     item written records its expiry there (or drops it when it has
//     none), so no write finds more expired items than have expired since
//     the last one;
//   - the hash's TTL moves to the latest "until" of the items written,
//     only when that is later than the TTL it has: an old item's TTL never
//     cuts a new item short, and a write never keeps the hash alive past
//     its latest item, so an idle collection expires with its last item.
//     An item living for ever (until 0) removes the TTL. A hash without a
//     TTL that existed before the write keeps none when flag f says items
//     may live for ever (ttl=0); otherwise it gets one, as a hash written
//     by another client would need.
//
// A write also removes nullField, the placeholder of an absent owner.
// Expiries compare with ARGV[1], the writer's clock, which the items'
// expiries were set by. It returns 0 when mode nx found the hash, else 1.
var writeScript = redis.NewScript(`
local key, now, mode, flags = KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3]
local indexed, forever = string.find(flags, "i", 1, true), string.find(flags, "f", 1, true)
local existed = redis.call("EXISTS", key) == 1
if mode == "nx" and existed then return 0 end
local idx, dirty = {}, false
if indexed and existed then
  local raw = redis.call("HGET", key, "` + expiriesField + `")
  if raw then
    local ok, t = pcall(cmsgpack.unpack, raw)
    if ok and type(t) == "table" then idx = t else dirty = true end
  end
  local gone = {}
  for f, ms in pairs(idx) do
    if type(f) ~= "string" or type(ms) ~= "number" or ms <= now then gone[#gone + 1] = f end
  end
  for _, f in ipairs(gone) do
    idx[f] = nil
    if type(f) == "string" then redis.call("HDEL", key, f) end
    dirty = true
  end
end
if mode == "del" then
  for i = 4, #ARGV do
    redis.call("HDEL", key, ARGV[i])
    if idx[ARGV[i]] then idx[ARGV[i]] = nil; dirty = true end
  end
else
  redis.call("HDEL", key, "` + nullField + `")
  local latest = -1
  for i = 4, #ARGV, 4 do
    local f, exp, untilms = ARGV[i], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    redis.call("HSET", key, f, ARGV[i + 1])
    if indexed then
      if exp > 0 then idx[f] = exp; dirty = true
      elseif idx[f] then idx[f] = nil; dirty = true end
    end
    if untilms == 0 or latest == 0 then latest = 0
    elseif untilms > latest then latest = untilms end
  end
  if latest == 0 then
    redis.call("PERSIST", key)
  elseif latest > 0 then
    local cur = redis.call("PEXPIRETIME", key)
    if (cur == -1 and (not existed or not forever)) or (cur >= 0 and latest > cur) then
      redis.call("PEXPIREAT", key, latest)
    end
  end
end
if indexed and dirty and redis.call("EXISTS", key) == 1 then
  if next(idx) == nil then
    redis.call("HDEL", key, "` + expiriesField + `")
  else
    redis.call("HSET", key, "` + expiriesField + `", cmsgpack.pack(idx))
  end
end
return 1
`)

// ownerWrite is one run of the write script: for owner k, whose hash is
// key, with args from hashArgs.
type ownerWrite[K comparable] struct {
	k    K
	key  string
	args []any
}

// writeOwners runs the write script for each of ws, in one round trip
// (a pipeline when there are several), and then makes each owner's local
// copy unverified and moves its generation on, as for a write of unknown
// outcome: the script's result is not the collection, so the next read
// asks Redis, and no read begun before stores what it saw. Nothing is sent
// when an owner's node is unreachable.
func (c *Cache[K, V]) writeOwners(ctx context.Context, op string, ws []ownerWrite[K]) error {
	for _, w := range ws {
		if n := c.nodes.of(w.key); n.unreachable() {
			return c.refuse(n, op, w.key)
		}
	}
	cmds := make([]*redis.Cmd, len(ws))
	if len(ws) == 1 {
		cmds[0] = c.runWrite(ctx, c.rdb, ws[0].key, ws[0].args)
	} else {
		pipe := c.rdb.Pipeline()
		for i, w := range ws {
			cmds[i] = c.runWrite(ctx, pipe, w.key, w.args)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			c.count.redisErrors.Add(1)
		}
	}
	var first error
	for i, w := range ws {
		err := cmds[i].Err()
		if err != nil && !notSent(err) || err == nil {
			c.uncertain(w.k, w.key)
		}
		if err != nil {
			if len(ws) == 1 {
				c.count.redisErrors.Add(1)
			}
			c.failed(c.nodes.of(w.key), err)
			if first == nil {
				first = fmt.Errorf("hotkey: %s %q: %w", op, w.key, err)
			}
			continue
		}
		c.announce(ctx, w.key)
	}
	return first
}
