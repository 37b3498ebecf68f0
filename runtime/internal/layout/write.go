package layout

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Item is one item a write sets: its field, its msgpack, and its own
// expiry (Unix milliseconds; 0 for none).
type Item struct {
	Field string
	Value []byte
	Exp   int64
}

// Write is one write of items to the hash at Key, made by SetItems or
// DelItems and sent by Run or RunMany, in one round trip whichever form
// the server takes (see formFor).
type Write struct {
	Key   string
	mode  string
	items []hashWrite
}

// hashWrite is one field a write sets: its value, its own expiry (exp,
// Unix milliseconds; 0 for none) and how long the hash must live for it
// (until, Unix milliseconds; 0 for ever).
type hashWrite struct {
	field string
	value []byte
	exp   int64
	until int64
}

// The modes of a write.
const (
	modeSet = "set" // write the items
	modeNX  = "nx"  // write the items unless the hash exists: a loader's write-back
	modeDel = "del" // delete the fields
	// modeLease, followed by a lease's placeholder, writes the items
	// only where the hash holds that placeholder alone
	// (lease.HashField), deleting it: a loader's write-back under its
	// lease (Hash.Fill).
	modeLease = "lease:"
)

// SetItems is the write of items to key's hash. Items that carry no
// expiry of their own keep the hash alive for ttl (0: for ever).
func (h *Hash) SetItems(key string, items []Item, ttl time.Duration) Write {
	ws := make([]hashWrite, len(items))
	for i, it := range items {
		ws[i] = hashWrite{field: it.Field, value: it.Value, exp: it.Exp, until: h.untilItem(it.Exp, ttl)}
	}
	return Write{Key: key, mode: modeSet, items: ws}
}

// DelItems is the deletion of fields from key's hash.
func (h *Hash) DelItems(key string, fields []string) Write {
	ws := make([]hashWrite, len(fields))
	for i, f := range fields {
		ws[i] = hashWrite{field: f}
	}
	return Write{Key: key, mode: modeDel, items: ws}
}

// Run runs w on p: EVALSHA, falling back to EVAL, on the client; EVAL in
// a pipeline, whose replies come too late for the fallback.
func (h *Hash) Run(ctx context.Context, p redis.Cmdable, w Write) *redis.Cmd {
	script, args := h.script(ctx, w)
	if _, pipelined := p.(redis.Pipeliner); pipelined {
		return script.Eval(ctx, p, []string{w.Key}, args...)
	}
	return script.Run(ctx, p, []string{w.Key}, args...)
}

// RunMany runs ws on rdb in one pipeline of EVALSHAs, the script's body
// sent only to the nodes that answer NOSCRIPT, in a second pipeline of
// EVALs: a batch of many owners does not carry the script once per
// owner. with, when not nil, queues the caller's own commands in the
// first pipeline, after the writes. It returns each write's reply,
// aligned with ws.
func (h *Hash) RunMany(ctx context.Context, rdb redis.Cmdable, ws []Write, with func(redis.Pipeliner)) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(ws))
	scripts := make([]*redis.Script, len(ws))
	argss := make([][]any, len(ws))
	pipe := rdb.Pipeline()
	for i, w := range ws {
		scripts[i], argss[i] = h.script(ctx, w)
		cmds[i] = scripts[i].EvalSha(ctx, pipe, []string{w.Key}, argss[i]...)
	}
	if with != nil {
		with(pipe)
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
			cmds[i] = scripts[i].Eval(ctx, pipe, []string{ws[i].Key}, argss[i]...)
		}
		pipe.Exec(ctx)
	}
	return cmds
}

// The forms a Hash's writes take, in Hash.form.
const (
	formUnknown int32 = iota // not asked yet, or the probe failed
	formScript               // the write script finds and deletes expired items itself
	formNative               // the server expires each item's field (HPEXPIREAT)
)

// formFor returns the form of the hash's writes: the native one when the
// items have expiries of their own and the server expires hash fields
// (Redis 7.4 and later), which the first write asks it once
// (FieldExpiry); otherwise the write script's. Until the server has
// answered (it is down, say), writes take the script's form, which every
// server runs and whose expiries a later native write keeps.
func (h *Hash) formFor(ctx context.Context) int32 {
	if h.expires == "" {
		return formScript
	}
	if f := h.form.Load(); f != formUnknown {
		return f
	}
	if h.probe == nil {
		return formScript
	}
	native, err := FieldExpiry(ctx, h.probe)
	if err != nil {
		return formScript
	}
	f := formScript
	if native {
		f = formNative
	}
	h.form.Store(f)
	return f
}

// script returns the script that runs w on the server, and its ARGV.
func (h *Hash) script(ctx context.Context, w Write) (*redis.Script, []any) {
	if h.formFor(ctx) == formNative {
		return nativeScript, h.args(w, 2)
	}
	args := h.args(w, 4)
	args[2], args[3] = h.clock.Now().UnixMilli(), h.expires
	return writeScript, args
}

// args are a script's ARGV for w: the mode, the flags, head-2 slots the
// caller fills, then four values per item (field, value, exp, until), or
// the fields alone for modeDel.
func (h *Hash) args(w Write, head int) []any {
	flags := ""
	if h.expires != "" {
		flags += "i"
	}
	if h.forever {
		flags += "f" // items may live for ever: a hash without a TTL is one's
	}
	args := make([]any, head, head+4*len(w.items))
	args[0], args[1] = w.mode, flags
	for _, it := range w.items {
		if w.mode == modeDel {
			args = append(args, it.field)
			continue
		}
		args = append(args, it.field, it.value, strconv.FormatInt(it.exp, 10), strconv.FormatInt(it.until, 10))
	}
	return args
}

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

// hashExpiry is the expiry of a copy of a hash a write created with
// items, as ExpiresAt: the write sets the latest of their "until"s
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
