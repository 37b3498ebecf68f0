package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

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
	// nextField holds the earliest expiry of the hash's items, in Unix
	// milliseconds, or "-" when none has one: a write that finds it
	// still ahead knows no item has expired without looking at any
	// (see writeScript).
	nextField = "%next"
	// nullField marks an owner the loader reported absent, as nullValue
	// does for a String.
	nullField = "%null"
)

// hashStore is how a collection's Cache stores values as hashes.
type hashStore struct {
	// expires is the msgpack map key of the items' expiry field (the
	// entity's expires=), which the write script reads in the items'
	// bytes; empty when items have no expiry.
	expires string
}

// readRaw reads the bytes of key: GET, or HGETALL in the runtime's form.
// An absent key is redis.Nil either way. When the entity learns its
// keys' TTLs (learnsTTL), a PTTL goes in the same round trip, and exp is
// the expiry of a copy of the bytes (expiresAt); otherwise 0.
func (c *Cache[K, V]) readRaw(ctx context.Context, key string) (b []byte, exp int64, err error) {
	if !c.learnsTTL {
		b, err = c.readBytes(ctx, key)
		return b, 0, err
	}
	pipe := c.rdb.Pipeline()
	read := c.queueRead(ctx, pipe, key)
	left := pipe.PTTL(ctx, key)
	sent := c.cfg.Clock.Now()
	_, _ = pipe.Exec(ctx) // each reply is read below
	if b, err = read(); err != nil {
		return nil, 0, err
	}
	if err := left.Err(); err != nil {
		return nil, 0, err
	}
	return b, expiresAt(sent, left.Val()), nil
}

// readBytes is readRaw without the TTL: one command.
func (c *Cache[K, V]) readBytes(ctx context.Context, key string) ([]byte, error) {
	if c.hash == nil {
		return c.rdb.Get(ctx, key).Bytes()
	}
	m, err := c.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	return hashBytes(m)
}

// queueRead queues the read of key's bytes on p, GET or HGETALL, and
// returns what reads its reply, as readRaw.
func (c *Cache[K, V]) queueRead(ctx context.Context, p redis.Pipeliner, key string) func() ([]byte, error) {
	if c.hash == nil {
		return p.Get(ctx, key).Bytes
	}
	cmd := p.HGetAll(ctx, key)
	return func() ([]byte, error) {
		m, err := cmd.Result()
		if err != nil {
			return nil, err
		}
		return hashBytes(m)
	}
}

// hgetallMany is mget for collections: one HGETALL per key (and its
// PTTL, when the entity learns TTLs), all in one pipeline, which go-redis
// splits per node on a cluster and sends to the nodes in parallel.
func (c *Cache[K, V]) hgetallMany(ctx context.Context, keys []string) ([][]byte, expiries, []error) {
	vals := make([][]byte, len(keys))
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(keys))
		}
		errs[i] = opErr("hgetall", keys[i], err)
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	nodes := make([]*node, len(keys))
	var lefts []*redis.DurationCmd
	if c.learnsTTL {
		lefts = make([]*redis.DurationCmd, len(keys))
	}
	for i, key := range keys {
		if nodes[i] = c.nodes.of(key); !nodes[i].Down(ctx) {
			cmds[i] = pipe.HGetAll(ctx, key)
			if lefts != nil {
				lefts[i] = pipe.PTTL(ctx, key)
			}
		}
	}
	sent := c.cfg.Clock.Now()
	c.execBatch(ctx, pipe, nodes)
	for i, cmd := range cmds {
		if cmd == nil {
			fail(i, nodes[i].Refuse())
			continue
		}
		m, err := cmd.Result()
		if err != nil {
			fail(i, c.batchFailed(ctx, nodes[i], err))
			continue
		}
		if vals[i], err = hashBytes(m); err != nil && !errors.Is(err, redis.Nil) {
			fail(i, err)
		}
	}
	exps, errs := learnExpiries(sent, keys, lefts, errs)
	return vals, exps, errs
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
var errHashForm = errors.New("malformed collection bytes")

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
// collection that carry none of their own. exp is the expiry of a copy of
// b, should the write land (see wroteExpiry): the key's TTL then is the
// one written.
func (c *Cache[K, V]) setNX(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) (done func() (bool, error), exp int64) {
	if c.hash == nil {
		return p.SetNX(ctx, key, b, ttl).Result, wroteExpiry(c.cfg.Clock.Now(), ttl)
	}
	var items []hashWrite
	if bytes.Equal(b, nullValue) {
		items = []hashWrite{{field: nullField, until: c.until(ttl)}}
	} else {
		err := readHashItems(b, func(field string, exp int64, value []byte) error {
			items = append(items, hashWrite{field: field, value: value, exp: exp, until: c.untilItem(exp, ttl)})
			return nil
		})
		if err != nil {
			return func() (bool, error) { return false, err }, 0
		}
	}
	cmd := c.runWrite(ctx, p, key, c.hashArgs(modeNX, items))
	return func() (bool, error) {
		n, err := cmd.Int()
		return n == 1, err
	}, hashExpiry(items)
}

// hashExpiry is the expiry of a copy of a hash the write script created
// with items: the script sets the latest of their "until"s (PEXPIREAT,
// which Redis holds through that millisecond), or none when one item
// lives for ever.
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

// landed reports whether a write-back queued with setNX wrote.
func landed(done func() (bool, error)) bool {
	ok, err := done()
	return ok && err == nil
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
// flags, the msgpack key of the items' expiry, then four values per item
// (field, value, exp, until), or the fields alone for modeDel.
func (c *Cache[K, V]) hashArgs(mode string, items []hashWrite) []any {
	flags := ""
	if c.hash.expires != "" {
		flags += "i"
	}
	if c.cfg.TTL == 0 {
		flags += "f" // items may live for ever: a hash without a TTL is one's
	}
	args := make([]any, 0, 4+4*len(items))
	args = append(args, c.cfg.Clock.Now().UnixMilli(), mode, flags, c.hash.expires)
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
//   - with flag i (the entity has expires=), a write first deletes the
//     items whose expiry has passed. nextField holds the earliest expiry
//     of the items, so the common write, which finds it still ahead,
//     reads one small field and nothing else. When it has passed (or is
//     missing: a hash written by someone else), the script reads the
//     items, finds each one's expiry in its msgpack (the map key in
//     ARGV[4], a msgpack timestamp), deletes the expired ones and records
//     the earliest of the rest. No per-item index is kept, so the
//     expiries cost the hash one field. An item whose bytes it cannot
//     read (not a map, no such key, not a timestamp, nested deeper than
//     64) counts as having no expiry: reads still leave it out once it
//     has expired, decoding it properly.
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
local key, now, mode, flags, expkey = KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
local indexed, forever = string.find(flags, "i", 1, true), string.find(flags, "f", 1, true)
local byte, sub = string.byte, string.sub

-- skip returns the position after the msgpack value at p in s, or nil.
local sizes = {[0xc0]=1, [0xc2]=1, [0xc3]=1, [0xcc]=2, [0xcd]=3, [0xce]=5, [0xcf]=9, [0xd0]=2, [0xd1]=3,
  [0xd2]=5, [0xd3]=9, [0xca]=5, [0xcb]=9, [0xd4]=3, [0xd5]=4, [0xd6]=6, [0xd7]=10, [0xd8]=18}
local function u(s, p, n)
  local v = 0
  for i = p, p + n - 1 do
    local b = byte(s, i)
    if not b then return nil end
    v = v * 256 + b
  end
  return v
end
local skip
local function count(s, p, c)
  if c >= 0x80 and c <= 0x8f then return c - 0x80, p + 1, 2 end
  if c >= 0x90 and c <= 0x9f then return c - 0x90, p + 1, 1 end
  if c == 0xdc then return u(s, p + 1, 2), p + 3, 1 end
  if c == 0xdd then return u(s, p + 1, 4), p + 5, 1 end
  if c == 0xde then return u(s, p + 1, 2), p + 3, 2 end
  if c == 0xdf then return u(s, p + 1, 4), p + 5, 2 end
  return nil
end
skip = function(s, p, depth)
  local c = byte(s, p)
  if not c or depth > 64 then return nil end
  if c <= 0x7f or c >= 0xe0 then return p + 1 end
  if c >= 0xa0 and c <= 0xbf then return p + 1 + c - 0xa0 end
  if sizes[c] then return p + sizes[c] end
  local lens = {[0xc4]=1, [0xd9]=1, [0xc5]=2, [0xda]=2, [0xc6]=4, [0xdb]=4}
  if lens[c] then
    local n = u(s, p + 1, lens[c])
    return n and p + 1 + lens[c] + n
  end
  local exts = {[0xc7]=1, [0xc8]=2, [0xc9]=4}
  if exts[c] then
    local n = u(s, p + 1, exts[c])
    return n and p + 2 + exts[c] + n
  end
  local n, q, per = count(s, p, c)
  if not n or n > #s then return nil end
  for _ = 1, n * per do
    q = skip(s, q, depth + 1)
    if not q then return nil end
  end
  return q
end
-- str returns the string at p and the position after it, or nil.
local function str(s, p)
  local c = byte(s, p)
  if not c then return nil end
  if c >= 0xa0 and c <= 0xbf then return sub(s, p + 1, p + c - 0xa0), p + 1 + c - 0xa0 end
  local lens = {[0xd9]=1, [0xda]=2, [0xdb]=4}
  if not lens[c] then return nil end
  local n = u(s, p + 1, lens[c])
  if not n then return nil end
  return sub(s, p + 1 + lens[c], p + lens[c] + n), p + 1 + lens[c] + n
end
-- expiry returns the Unix milliseconds of item s's expiry, or nil.
local function expiry(s)
  local c = byte(s, 1)
  if not c then return nil end
  local n, p, per = count(s, 1, c)
  if not n or per ~= 2 then return nil end
  for _ = 1, n do
    local k, q = str(s, p)
    if not k then
      q = skip(s, p, 1)
      if not q then return nil end
    end
    if k == expkey then
      local t = byte(s, q)
      local secs, nsec
      if t == 0xd6 and byte(s, q + 1) == 0xff then
        secs, nsec = u(s, q + 2, 4), 0
      elseif t == 0xd7 and byte(s, q + 1) == 0xff then
        local hi, lo = u(s, q + 2, 4), u(s, q + 6, 4)
        if not hi or not lo then return nil end
        secs, nsec = (hi % 4) * 4294967296 + lo, math.floor(hi / 4)
      elseif t == 0xc7 and byte(s, q + 1) == 12 and byte(s, q + 2) == 0xff then
        nsec, secs = u(s, q + 3, 4), u(s, q + 7, 8)
        if secs and secs >= 9223372036854775808 then return nil end -- before 1970: the zero time
      end
      if not secs or secs <= 0 then return nil end
      return secs * 1000 + math.floor(nsec / 1000000)
    end
    p = skip(s, q, 1)
    if not p then return nil end
  end
  return nil
end

local existed = redis.call("EXISTS", key) == 1
if mode == "nx" and existed then return 0 end
local next, oldnext = nil, nil
if indexed and existed then
  oldnext = redis.call("HGET", key, "` + nextField + `")
  if oldnext == "-" then next = -1 else next = tonumber(oldnext) end
  if next == nil or (next >= 0 and next <= now) then
    next = -1
    local all = redis.call("HGETALL", key)
    for i = 1, #all, 2 do
      local f = all[i]
      if not (byte(f, 1) == 37 and (byte(f, 2) or 0) >= 97 and (byte(f, 2) or 0) <= 122) then
        local ok, ms = pcall(expiry, all[i + 1])
        if ok and ms then
          if ms <= now then redis.call("HDEL", key, f)
          elseif next < 0 or ms < next then next = ms end
        end
      end
    end
  end
end
if mode == "del" then
  for i = 5, #ARGV do redis.call("HDEL", key, ARGV[i]) end
else
  redis.call("HDEL", key, "` + nullField + `")
  local latest = -1
  if indexed and next == nil then next = -1 end
  for i = 5, #ARGV, 4 do
    local f, exp, untilms = ARGV[i], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    redis.call("HSET", key, f, ARGV[i + 1])
    if indexed and exp > 0 and (next < 0 or exp < next) then next = exp end
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
if next ~= nil and redis.call("EXISTS", key) == 1 then
  local v = "-"
  if next >= 0 then v = string.format("%d", next) end
  if v ~= oldnext then redis.call("HSET", key, "` + nextField + `", v) end
end
return 1
`)

// ownerWrite is one run of the write script: for owner k, whose hash is
// key, with args from hashArgs.
type ownerWrite[K comparable, V any] struct {
	k    K
	key  string
	args []any
	// apply makes, from the collection a copy holds (nil: an absent
	// owner), the collection the write leaves in Redis as far as this
	// write goes: its items set or deleted (see applied).
	apply func(old *V) *V
}

// writeOwners runs the write script for each of ws, in one round trip
// (a pipeline when there are several), and then applies each write to its
// owner's local copy (applied), or makes it unverified for a write of
// unknown outcome (uncertain), moving the generation on either way, so
// that no read begun before stores what it saw; a hot owner's is read
// back to be verified again. Nothing is sent when an owner's node is
// unreachable.
func (c *Cache[K, V]) writeOwners(ctx context.Context, op string, ws []ownerWrite[K, V]) error {
	for _, w := range ws {
		if n := c.nodes.of(w.key); n.Down(ctx) {
			return opErr(op, w.key, n.Refuse())
		}
	}
	ts := make([]token, len(ws))
	for i, w := range ws {
		ts[i] = c.begin(w.key)
	}
	cmds := make([]*redis.Cmd, len(ws))
	if len(ws) == 1 {
		cmds[0] = c.runWrite(ctx, c.rdb, ws[0].key, ws[0].args)
	} else {
		c.pipelineWrites(ctx, ws, cmds)
	}
	var first error
	var hot []*hotEntry[K]
	for i, w := range ws {
		err := cmds[i].Err()
		switch {
		case err == nil:
			c.applied(w.k, w.key, ts[i], w.apply)
			if e := c.det.lookup(w.k); e != nil {
				hot = append(hot, e)
			}
		case !breaker.NotSent(err):
			c.uncertain(w.k, w.key)
		}
		if err != nil {
			if len(ws) == 1 {
				c.countRedisError(ctx, err)
			}
			c.nodes.of(w.key).Failed(ctx, err)
			if first == nil {
				first = opErr(op, w.key, err)
			}
			continue
		}
		c.announce(ctx, w.key)
	}
	// A hot owner's copy is read back at once: it holds this write, but
	// other writers' items only as far as the copy did, so until then it
	// is served only while Redis cannot be reached.
	c.reload(ctx, hot)
	return first
}

// pipelineWrites runs the write script for each of ws in one pipeline of
// EVALSHAs, the script's body sent only to the nodes that answer
// NOSCRIPT, in a second pipeline of EVALs: a batch of many owners does
// not carry the script once per owner. cmds receives the replies.
func (c *Cache[K, V]) pipelineWrites(ctx context.Context, ws []ownerWrite[K, V], cmds []*redis.Cmd) {
	pipe := c.rdb.Pipeline()
	for i, w := range ws {
		cmds[i] = writeScript.EvalSha(ctx, pipe, []string{w.key}, w.args...)
	}
	pipe.Exec(ctx) // errors are each command's, read below
	var again []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		pipe := c.rdb.Pipeline()
		for _, i := range again {
			cmds[i] = writeScript.Eval(ctx, pipe, []string{ws[i].key}, ws[i].args...)
		}
		pipe.Exec(ctx)
	}
	for _, cmd := range cmds {
		if cmd.Err() != nil {
			c.countRedisError(ctx, cmd.Err())
			return
		}
	}
}
