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
// every reader of the key treats it as no value at all (Is). Each lease
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

// Lease is one lease on a key: this process's own (New), or one another
// process holds (Found).
type Lease struct {
	key         string
	placeholder string        // tag and the token: what the key holds while leased
	done        string        // the stream its holder ends on; "" when none can share the key's slot
	ttl         time.Duration // how long the placeholder lives
	// ended is set once this process's Fill has run: the lease is over,
	// its row written or not.
	ended bool
}

// New returns a new lease on key, with a token of its own, whose
// placeholder lives ttl. cluster is set when the key's client is a
// cluster's, where the lease's stream must share the key's hash slot.
func New(key string, ttl time.Duration, cluster bool) Lease {
	token := strconv.FormatUint(rand.Uint64(), 36)
	return Lease{key: key, placeholder: tag + token, done: doneKey(key, token, cluster), ttl: ttl}
}

// Found returns the lease whose placeholder b was read at key, and false
// when b is not a placeholder.
func Found(key string, b []byte, ttl time.Duration, cluster bool) (Lease, bool) {
	if !Is(b) {
		return Lease{}, false
	}
	token := string(b[len(tag):])
	return Lease{key: key, placeholder: string(b), done: doneKey(key, token, cluster), ttl: ttl}, true
}

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
func (l Lease) Take(ctx context.Context) *redis.StringCmd {
	return redis.NewStringCmd(ctx, "set", l.key, l.placeholder, "nx", "get", "px", l.ttl.Milliseconds())
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
local ours = redis.call('GET', KEYS[1]) == ARGV[1]
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
// stream's TTL.
var release = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('DEL', KEYS[1])
end
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
	redis.call('XADD', KEYS[2], '*', 'o', ARGV[2])
	redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 0`)

// watch creates the lease's stream, empty (an entry added and trimmed
// away), where the key still holds the lease, for a waiter to block on;
// 0 when it no longer does. KEYS as fill's; ARGV: the placeholder, the
// stream's TTL in milliseconds.
var watch = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '0', '*', 'o', 'waiting')
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)

// Fill queues on p the write-back of b, the row l's load read, with ttl
// (0: none), and the end of l. done reports, once p has run, whether the
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

// Ended reports that a Fill of l ran, whether its row landed or not: l is
// over, and its waiters were told.
func (l *Lease) Ended() bool { return l.ended }

// Release deletes l's placeholder, where the key still holds it, and ends
// l with outcome (Absent or Dropped), so that its waiters stop waiting.
func (l Lease) Release(ctx context.Context, p redis.Cmdable, outcome string) error {
	return run(ctx, p, release, l.keys(), l.placeholder, outcome, l.ttl.Milliseconds()).Err()
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
	held, err := run(ctx, rdb, watch, l.keys(), l.placeholder, l.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return "", err
	case held == 0:
		return Gone, nil
	}
	// Another waiter making the stream wakes this one with no entry:
	// block again, until the holder's entry or the lease's end.
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
