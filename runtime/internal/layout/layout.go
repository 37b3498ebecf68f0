// Package layout is how a Cache's values sit in Redis: a String per key
// (String), or, for a collection, a hash per key holding its items
// (Hash). A layout issues the commands that read and write values, on a
// client or on a pipeline its caller runs, and returns bytes, expiries
// and errors. Which node holds a key, whether a command may be sent
// there, and what the bytes decode to are the caller's: every other part
// of the runtime (detection, local copies, freshness, refresh, loaders,
// stats) handles a value, a whole collection included, as bytes.
//
// An absent key reads as redis.Nil. Errors carry no prefix: the runtime
// wraps them as the error of the operation that failed.
package layout

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"

	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
)

// Null is the placeholder written for a row the loader reported absent.
// It starts with 0xc1, a byte msgpack never uses, so no value of any
// entity can be mistaken for it.
var Null = []byte("\xc1hotkeygen:null")

// Clock is the source of the times a layout writes and reads expiries
// by: the Cache's.
type Clock interface {
	Now() time.Time
}

// Layout is how values sit in Redis. p, where a method takes one, is the
// client, which sends the command at once, or a pipeline, whose Exec
// comes before the command's reply is read.
type Layout interface {
	// ReadOp names a read of one value in errors: "get", or "hgetall".
	ReadOp() string
	// Read returns the bytes of key, sent by s, redis.Nil when it is
	// absent. keep is set when the caller may keep a copy of them: when
	// the layout learns TTLs, a PTTL then goes in the same round trip,
	// and exp is the expiry of a copy of the bytes (ExpiresAt). Otherwise
	// exp is 0, or Unasked when the layout learns TTLs and keep is not
	// set.
	Read(ctx context.Context, s send.Sender, key string, keep bool) (b []byte, exp int64, err error)
	// PerRead bounds the keys one command of a batch read holds. The
	// caller splits a batch into groups of at most that many keys, the
	// keys of each on one node (of one hash slot on a cluster), and
	// queues each group with Queue.
	PerRead() int
	// Queue queues on pipe the read of keys, one group of a batch read
	// (see PerRead), and, when the layout learns TTLs, the PTTL of each
	// key j the caller may keep a copy of (keep[j]; keep nil: every key),
	// and returns its reply, read once pipe has run.
	Queue(ctx context.Context, pipe redis.Pipeliner, keys []string, keep []bool) *Reply
	// SetNX writes b under key unless key exists, and done reports
	// whether it did: a loader's write-back, which never overwrites
	// what a writer stored while the loader ran. ttl is the key's expiry
	// (for a collection, that of the items that carry none of their
	// own; see Hash); 0 for none. exp is the expiry of a copy of b,
	// should the write land: the key's TTL then is the one written.
	SetNX(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) (done Written, exp int64)
	// Fill writes b under key, as SetNX does, only while key holds ls's
	// placeholder, the load's lease (runtime/internal/lease), and ends
	// ls: a write or a delete since the lease was taken wins over the
	// loaded row.
	Fill(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration, ls *lease.Lease) (done Written, exp int64)
	// Set writes b under key with ttl, whatever key holds: a write
	// through the repository, or a row the change buffer synced.
	Set(ctx context.Context, p redis.Cmdable, key string, b []byte, ttl time.Duration) redis.Cmder
	// Del deletes key.
	Del(ctx context.Context, p redis.Cmdable, key string) redis.Cmder
}

// Written reports, once its command has run, whether a write-if-absent
// (SetNX) wrote, or the command's error.
type Written func() (bool, error)

// Landed reports whether the write ran and wrote.
func (w Written) Landed() bool {
	ok, err := w()
	return ok && err == nil
}

// Reply is the answer to a read Queue queued, read once its pipeline has
// run.
type Reply struct {
	values func() ([][]byte, error)
	// lefts holds a PTTL per key, nil for a key whose copy the caller
	// does not keep; lefts is nil unless the layout learns TTLs.
	lefts []*redis.DurationCmd
}

// Values returns the bytes of each key read, nil where Redis has none,
// or the error of the read's command.
func (r *Reply) Values() ([][]byte, error) { return r.values() }

// Expiry returns the expiry of a copy of key j's bytes (see ExpiresAt),
// read by a pipeline sent at sent, or the error of its PTTL; 0 when the
// layout learns no TTL, Unasked when its copy was not to be kept.
func (r *Reply) Expiry(j int, sent time.Time) (int64, error) {
	if r.lefts == nil {
		return 0, nil
	}
	left := r.lefts[j]
	if left == nil {
		return Unasked, nil
	}
	if err := left.Err(); err != nil {
		return 0, err
	}
	return ExpiresAt(sent, left.Val()), nil
}

// base is what both layouts share: the clock of expiries, whether reads
// learn the keys' TTLs, and DEL.
type base struct {
	clock Clock
	// learnTTL is set when the entity's keys carry a TTL: a read whose
	// caller may keep a copy then asks for the key's remaining TTL in the
	// same round trip, so that no local copy outlives the key. Other
	// reads, the cold ones of keys that are not hot, and the reads of
	// entities without a TTL pay nothing.
	learnTTL bool
}

// Del deletes key: a String, or a whole collection's hash.
func (l *base) Del(ctx context.Context, p redis.Cmdable, key string) redis.Cmder {
	return p.Del(ctx, key)
}

// read is Read for a layout that reads one key with one command, cmd,
// whose reply bytes reads: sent by s alone, or with the key's PTTL in the
// same round trip when the layout learns TTLs and the caller may keep a
// copy (keep).
func (l *base) read(ctx context.Context, s send.Sender, key string, keep bool, cmd redis.Cmder, bytes func() ([]byte, error)) ([]byte, int64, error) {
	if !l.learnTTL || !keep {
		if err := s.Send(ctx, cmd); err != nil {
			return nil, 0, err
		}
		b, err := bytes()
		return b, l.unasked(), err
	}
	left := redis.NewDurationCmd(ctx, time.Millisecond, "pttl", key)
	sent := l.clock.Now()
	if err := s.Send(ctx, cmd, left); err != nil {
		return nil, 0, err
	}
	b, err := bytes()
	if err != nil {
		return nil, 0, err
	}
	if err := left.Err(); err != nil {
		return nil, 0, err
	}
	return b, ExpiresAt(sent, left.Val()), nil
}

// unasked is the expiry of a copy of a key read without its PTTL: 0 when
// the layout learns no TTL, whose copies live until invalidated, and
// Unasked otherwise.
func (l *base) unasked() int64 {
	if l.learnTTL {
		return Unasked
	}
	return 0
}

// queueTTLs queues on pipe a PTTL for each of keys whose copy the caller
// may keep (keep[i]; keep nil: all), when the layout learns TTLs, for
// Reply.Expiry.
func (l *base) queueTTLs(ctx context.Context, pipe redis.Pipeliner, keys []string, keep []bool) []*redis.DurationCmd {
	if !l.learnTTL {
		return nil
	}
	lefts := make([]*redis.DurationCmd, len(keys))
	for i, key := range keys {
		if keep == nil || keep[i] {
			lefts[i] = pipe.PTTL(ctx, key)
		}
	}
	return lefts
}
