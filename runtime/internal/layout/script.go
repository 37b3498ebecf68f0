package layout

import (
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
)

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
// Expiries compare with ARGV[3], the writer's clock, which the items'
// expiries were set by. It returns 0 when mode nx found the hash, or a
// lease's mode found the placeholder gone (leaseMode), else 1.
// ARGV is the mode, the flags, the time, the items' expiry key, then
// four values per item (field, value, exp, until), or the fields alone
// for mode del (see Hash.args).
var writeScript = redis.NewScript(`
local key, mode, flags, now, expkey = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
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

` + leaseMode + `
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
` + moveTTL + `
end
if next ~= nil and redis.call("EXISTS", key) == 1 then
  local v = "-"
  if next >= 0 then v = string.format("%d", next) end
  if v ~= oldnext then redis.call("HSET", key, "` + nextField + `", v) end
end
return 1
`)

// nativeScript is writeScript for a server that expires hash fields
// itself (formNative): each item with an expiry of its own gets it as its
// field's (HPEXPIREAT; an HSET over a field clears the one it had, as an
// item written without expiry needs), so no write looks for expired
// items, nextField is not kept (a write removes one an earlier form
// left), and the server's reads never return an item the server has
// expired. The hash's TTL and nullField are kept as writeScript keeps
// them. The server's clock judges the items' expiries, as it already
// judges the hash's TTL; reads still leave out an item past its expiry
// by the reader's clock. ARGV is the mode, the flags, then the items as
// writeScript's.
var nativeScript = redis.NewScript(`
local key, mode, forever = KEYS[1], ARGV[1], string.find(ARGV[2], "f", 1, true)
` + leaseMode + `
local existed = redis.call("EXISTS", key) == 1
if mode == "nx" and existed then return 0 end
if mode == "del" then
  for i = 3, #ARGV do redis.call("HDEL", key, ARGV[i]) end
  return 1
end
redis.call("HDEL", key, "` + nullField + `", "` + nextField + `")
local latest = -1
for i = 3, #ARGV, 4 do
  local f, exp, untilms = ARGV[i], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  redis.call("HSET", key, f, ARGV[i + 1])
  if exp > 0 then redis.call("HPEXPIREAT", key, exp, "FIELDS", 1, f) end
  if untilms == 0 or latest == 0 then latest = 0
  elseif untilms > latest then latest = untilms end
end
` + moveTTL + `
return 1
`)

// leaseMode is the Lua both write scripts begin with: a write in a
// lease's mode (modeLease) runs as mode nx on the hash emptied of the
// lease's placeholder, or not at all (0) where the hash no longer holds
// it alone; any other write but nx deletes a placeholder it finds, so
// that the load under it does not write its older row over this one.
const leaseMode = `
if string.sub(mode, 1, 6) == "lease:" then
  if redis.call("HGET", key, "` + lease.HashField + `") ~= string.sub(mode, 7) or redis.call("HLEN", key) ~= 1 then return 0 end
  redis.call("DEL", key)
  mode = "nx"
elseif mode ~= "nx" then
  redis.call("HDEL", key, "` + lease.HashField + `")
end
`

// moveTTL is the Lua both write scripts end a write of items with: the
// hash's TTL moves to latest, the latest "until" of the items written,
// as writeScript's comment says.
const moveTTL = `
if latest == 0 then
  redis.call("PERSIST", key)
elseif latest > 0 then
  local cur = redis.call("PEXPIRETIME", key)
  if (cur == -1 and (not existed or not forever)) or (cur >= 0 and latest > cur) then
    redis.call("PEXPIREAT", key, latest)
  end
end`
