// Package lease is a load's right to write its row back to a key, as
// memcache's leases give it (Facebook, "Scaling Memcache", NSDI 2013) and
// rueidisaside does on Redis. A read that misses takes the key's lease
// before it calls the loader: a placeholder at the key itself, written
// only where the key is absent, and only the lease's holder writes its row
// back, and only while the placeholder is still there. So a delete or a
// set that follows the database's update, sent by any client while the
// load ran, removes or replaces the placeholder, and the row the load read
// before the update is never written after it (the cache-aside race). A
// read of another process that finds the placeholder waits for the holder
// to end instead of asking the database too: one load per key per fleet.
//
// The placeholder starts with 0xc1, a byte msgpack never uses, like the
// null placeholder of an absent row, so no value is mistaken for it, and
// every reader of the key treats it as no value at all (Is). A key whose
// values are hashes (a collection's) holds it in a hash of one field,
// HashField, which its readers find no item in; its write-back is the
// layout's write script in a lease's mode (After). Each lease
// has a token of its own, and a stream (done) beside the key: a process
// that waits creates it, empty, while the key still holds the lease, and
// blocks on it (XREAD BLOCK); the holder, in the same script that writes
// its row or deletes the placeholder, adds its outcome to the stream when
// the stream exists, which wakes every waiter at once, not by polling. A
// load nobody waits for leaves no stream behind. A holder that dies ends
// nothing: the placeholder expires with the lease's TTL, and a waiter
// takes the next lease.
//
// It needs no key or value type and is tested here alone against a real
// redis-server; the runtime's load.go says when a read takes, waits for
// and fills a lease.
package lease

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// tag starts every placeholder; the token follows it.
const tag = "\xc1hotkeygen:lease:"

// Is reports that b, read at a key, is a lease's placeholder: a load is
// in flight and the key holds no value.
func Is(b []byte) bool { return bytes.HasPrefix(b, []byte(tag)) }

// Lease is one lease on a key: this process's own (Keys.New), or one
// another process holds (Keys.Found).
type Lease struct {
	key         string
	placeholder string        // tag and the token: what the key holds while leased
	done        string        // the stream its holder ends on; "" when none can share the key's slot
	ttl         time.Duration // how long the placeholder lives
	hash        bool          // the key holds a hash: the placeholder is its field HashField
	// ended is set once this process's write-back has run: the lease is
	// over, its row written or not.
	ended bool
}

// HashField is the field that holds a lease's placeholder at a key whose
// values are hashes (a collection's): a hash that holds it and nothing
// else holds the placeholder, and no value. Fields of a '%' and a
// lower-case letter never name an item (layout.Hash).
const HashField = "%lease"

// Keys says how the leases of one entity's keys are kept: how long a
// placeholder lives, whether the keys are a cluster's (a lease's stream
// must then share its key's hash slot), and whether each value is a hash
// (a collection's) rather than a String.
type Keys struct {
	TTL           time.Duration
	Cluster, Hash bool
}

// New returns a new lease on key, with a token of its own.
func (ks Keys) New(key string) Lease {
	token := strconv.FormatUint(rand.Uint64(), 36)
	return Lease{key: key, placeholder: tag + token, done: doneKey(key, token, ks.Cluster), ttl: ks.TTL, hash: ks.Hash}
}

// Found returns the lease whose placeholder b was read at key, and false
// when b is not a placeholder.
func (ks Keys) Found(key string, b []byte) (Lease, bool) {
	if !Is(b) {
		return Lease{}, false
	}
	token := string(b[len(tag):])
	return Lease{key: key, placeholder: string(b), done: doneKey(key, token, ks.Cluster), ttl: ks.TTL, hash: ks.Hash}, true
}

// Placeholder is what l's key holds while leased: at a hash, the value of
// its field HashField.
func (l Lease) Placeholder() string { return l.placeholder }

// doneKey names the stream a lease's holder ends on: beside the key, in
// the key's hash slot on a cluster (the key's hash tag, or the key made
// one). A cluster key with braces but no hash tag of its own has no such
// name, "": its waiters wait out the lease.
func doneKey(key, token string, cluster bool) string {
	const suffix = "\xc1done:"
	switch {
	case !cluster || hasTag(key):
		return key + suffix + token
	case !strings.ContainsAny(key, "{}"):
		return "{" + key + "}" + suffix + token
	}
	return ""
}

// hasTag reports that key has a hash tag of its own: a '{', then a '}'
// after it with something between them, as Redis Cluster reads it.
func hasTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	end := strings.IndexByte(key[open+1:], '}')
	return end > 0
}

// Take is the command that takes l: SET NX GET, the placeholder written
// with l's TTL where the key is absent. Sent, its reply is redis.Nil
// when l was taken, or else the bytes the key holds: a value, the null
// placeholder, or another lease's placeholder (Found). Redis 7.0 or later.
// At a hash, a script does the same (takeHash), and answers Present for
// a hash that holds a value, which the caller reads as its layout does.
func (l Lease) Take(ctx context.Context) *redis.StringCmd {
	if l.hash {
		return redis.NewStringCmd(ctx, "eval", takeHash, 1, l.key, l.placeholder, l.ttl.Milliseconds(), present)
	}
	return redis.NewStringCmd(ctx, "set", l.key, l.placeholder, "nx", "get", "px", l.ttl.Milliseconds())
}

// present is Take's answer at a hash that holds a value.
const present = "\xc1hotkeygen:present"

// Present reports that b, a Take's answer at a hash, says the hash holds
// a value: the caller reads it.
func Present(b []byte) bool { return string(b) == present }

// takeHash is Take at a hash: the placeholder in HashField of a new hash,
// with the lease's TTL, where the key is absent (nil); another lease's
// placeholder where the hash holds that alone; ARGV[3] otherwise.
const takeHash = `
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then
	redis.call('HSET', KEYS[1], '` + HashField + `', ARGV[1])
	redis.call('PEXPIRE', KEYS[1], ARGV[2])
	return false
end
if t == 'hash' and redis.call('HLEN', KEYS[1]) == 1 then
	local held = redis.call('HGET', KEYS[1], '` + HashField + `')
	if held then return held end
end
return ARGV[3]`

// holds is the Lua test that the key, KEYS[1], still holds the lease
// whose placeholder is ARGV[1]: a String's value, or a hash's only field.
func holds(hash bool) string {
	if hash {
		return `(redis.call('HGET', KEYS[1], '` + HashField + `') == ARGV[1] and redis.call('HLEN', KEYS[1]) == 1)`
	}
	return `(redis.call('GET', KEYS[1]) == ARGV[1])`
}

// The outcomes a holder ends a lease with, as its waiters read them.
const (
	// Landed: the row was written back; the key holds it.
	Landed = "landed"
	// Lost: a write or a delete removed the placeholder while the load
	// ran, so the row was not written; the key holds what they left.
	Lost = "lost"
	// Absent: the loader found no row, and none was remembered.
	Absent = "absent"
	// Dropped: the load failed, or its row was not to be stored.
	Dropped = "dropped"
	// Expired: no holder ended the lease within its TTL (a waiter's
	// verdict, never written).
	Expired = "expired"
	// Gone: the key no longer held the lease when the wait began: its
	// holder had ended it, or a write or a delete had taken the key (a
	// waiter's verdict, never written).
	Gone = "gone"
)

// fill writes the row back where the key still holds the lease, and ends
// the lease: landed, or lost when the placeholder is gone. KEYS: the key,
// and the stream when there is one. ARGV: the placeholder, the row, its
// TTL in milliseconds (0: none), the stream's.
var fill = redis.NewScript(`
local ours = ` + holds(false) + `
if ours then
	if ARGV[3] == '0' then
		redis.call('SET', KEYS[1], ARGV[2])
	else
		redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
	end
end
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
	redis.call('XADD', KEYS[2], '*', 'o', ours and 'landed' or 'lost')
	redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
if ours then return 1 end
return 0`)

// release deletes the placeholder where the key still holds it, and ends
// the lease with ARGV[2]. KEYS and ARGV[1] as fill's; ARGV[3] the
// stream's TTL. Of a String and of a hash.
var release = [2]*redis.Script{releaseOf(false), releaseOf(true)}

func releaseOf(hash bool) *redis.Script {
	return redis.NewScript(`
if ` + holds(hash) + ` then
	redis.call('DEL', KEYS[1])
end
` + ends + `
return 0`)
}

// ends adds the outcome ARGV[2] to the lease's stream, KEYS[2], where
// there is one and a waiter made it, for ARGV[3] milliseconds.
const ends = `
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
	redis.call('XADD', KEYS[2], '*', 'o', ARGV[2])
	redis.call('PEXPIRE', KEYS[2], ARGV[3])
end`

// notify ends a lease at a hash whose write-back ran just before it
// (After): ends, with the placeholder in ARGV[1] unused.
var notify = redis.NewScript(ends + `
return 0`)

// watch creates the lease's stream, empty (an entry added and trimmed
// away), where the key still holds the lease, for a waiter to block on;
// 0 when it no longer does. Only the first waiter creates it: the entry
// added wakes every reader blocked on the stream, with nothing to read,
// and a fleet's waiters each waking all the others would cost the node
// a read per pair of them. KEYS as fill's; ARGV: the placeholder, the
// stream's TTL in milliseconds.
var watch = [2]*redis.Script{watchOf(false), watchOf(true)}

func watchOf(hash bool) *redis.Script {
	return redis.NewScript(`
if not ` + holds(hash) + ` then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
	redis.call('XADD', KEYS[2], 'MAXLEN', '0', '*', 'o', 'waiting')
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)
}

// kind indexes release and watch: 1 at a hash.
func (l Lease) kind() int {
	if l.hash {
		return 1
	}
	return 0
}

// Fill queues on p the write-back of b, the row l's load read, with ttl
// (0: none), and the end of l, at a String (a hash's is its layout's
// write, guarded by the placeholder, and After). done reports, once p has run, whether the
// row landed: false when a write or a delete took the key while the load
// ran. On a pipeline the script goes as EVAL, whose reply comes too late
// for EVALSHA's fallback; on the client as EVALSHA, falling back to EVAL.
func (l *Lease) Fill(ctx context.Context, p redis.Cmdable, b []byte, ttl time.Duration) (done func() (bool, error)) {
	cmd := run(ctx, p, fill, l.keys(), l.placeholder, b, ttl.Milliseconds(), l.ttl.Milliseconds())
	return func() (bool, error) {
		n, err := cmd.Int()
		l.ended = err == nil
		return n == 1, err
	}
}

// After queues on p the end of l, landed, after the write-back its
// layout queued on p before it (done), guarded by l's placeholder: the
// write of a hash's items, which only the layout knows how to make. Its
// waiters read the key again; one that begins after the write finds the
// lease gone. done is returned with l's end recorded once it has run.
func (l *Lease) After(ctx context.Context, p redis.Cmdable, done func() (bool, error)) func() (bool, error) {
	if l.done != "" {
		run(ctx, p, notify, []string{l.key, l.done}, l.placeholder, Landed, l.ttl.Milliseconds())
	}
	return func() (bool, error) {
		landed, err := done()
		l.ended = err == nil
		return landed, err
	}
}

// Ended reports that a Fill of l ran, whether its row landed or not: l is
// over, and its waiters were told.
func (l *Lease) Ended() bool { return l.ended }

// Release deletes l's placeholder, where the key still holds it, and ends
// l with outcome (Absent or Dropped), so that its waiters stop waiting.
func (l Lease) Release(ctx context.Context, p redis.Cmdable, outcome string) error {
	return run(ctx, p, release[l.kind()], l.keys(), l.placeholder, outcome, l.ttl.Milliseconds()).Err()
}

func (l Lease) keys() []string {
	if l.done == "" {
		return []string{l.key}
	}
	return []string{l.key, l.done}
}

func run(ctx context.Context, p redis.Cmdable, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	if _, pipelined := p.(redis.Pipeliner); pipelined {
		return s.Eval(ctx, p, keys, args...)
	}
	return s.Run(ctx, p, keys, args...)
}

// Wait blocks until l's holder ends it, and returns the outcome it ended
// with; Gone when the key no longer held l as the wait began; or Expired
// once l's TTL has passed since the caller found it (found): by then the
// placeholder is gone, and the key is free to lease again. The stream is
// made, and read from its start, only while the key holds l, so an end
// is never missed: the holder's script adds to the stream in the same
// step that removes the placeholder.
func (l Lease) Wait(ctx context.Context, rdb redis.Cmdable, found time.Time) (string, error) {
	deadline := found.Add(l.ttl)
	if l.done == "" {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case <-t.C:
			return Expired, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	held, err := run(ctx, rdb, watch[l.kind()], l.keys(), l.placeholder, l.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return "", err
	case held == 0:
		return Gone, nil
	}
	// A wake-up with no entry (a stream made again by another waiter
	// after it expired): block again, until the holder's entry or the
	// lease's end.
	for {
		left := time.Until(deadline)
		if left < time.Millisecond {
			return Expired, nil
		}
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{l.done, "0"}, Count: 1, Block: left}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return Expired, nil
		case err != nil:
			return "", err
		}
		for _, s := range res {
			for _, m := range s.Messages {
				if o, ok := m.Values["o"].(string); ok {
					return o, nil
				}
			}
		}
	}
}
