// Package reads sends a Cache's reads to Redis through the breakers of
// their nodes: one key's read (Ask), and a batch in as few commands as
// the layout allows, one round trip per node (Many, ManyUntilOpened).
// None needs the
// key or value type: they move bytes, and the runtime's typed facade
// decodes them. Why a package: what a read does when a node is down,
// hangs or fails is the same for every entity, and is tested here alone
// against a real redis-server.
package reads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// Reader reads a Cache's keys from Redis. Its fields are set once, when
// the Cache has joined its client's hub, and never change.
type Reader struct {
	Client redis.UniversalClient
	// Store is how values sit in Redis (runtime/internal/layout).
	Store layout.Layout
	// Nodes says which node, and so which breaker, covers a key.
	Nodes *track.Nodes
	// Cluster is set on a Redis Cluster, where one MGET holds keys of one
	// hash slot only.
	Cluster bool
	// LearnsTTL is set when the entity's keys carry a TTL: a batch read
	// then asks the PTTL of each key its caller may keep a copy of, in
	// the same round trip.
	LearnsTTL bool
	Now       func() time.Time
	// Refuse counts a call refused because n is unreachable, and returns
	// the cause of its error.
	Refuse func(n *track.Node) error
	// Count counts err, a command's failure under ctx, as a Redis error
	// unless it says only that ctx ended, and reports whether it counted.
	Count func(ctx context.Context, err error) bool
	// Missing is the error of a key absent from Redis; Closed that of a
	// read after the Cache closed.
	Missing, Closed error
}

// Ask sends read, a read of key, to the key's node through its breaker:
// refused at once while the node is down, unless patient, and abandoned
// when the breaker opens meanwhile. A missing key is Missing; a failure
// is counted and handed to the breaker. Every read of one key goes
// through it: Get's, the flight's, HGet's.
func (r *Reader) Ask(ctx context.Context, key string, patient bool, read func(context.Context) error) error {
	n := r.Nodes.Of(key)
	if !patient && n.Down(ctx) {
		return r.Refuse(n)
	}
	rctx, release := ctx, func(bool) {}
	if !patient {
		rctx, release = n.UntilOpened(ctx)
	}
	err := read(rctx)
	release(rctx.Err() == nil)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return r.Missing
	case !patient && n.Unreachable() && ctx.Err() == nil:
		return r.Refuse(n) // the breaker opened while it waited
	}
	r.Count(ctx, err)
	n.Failed(ctx, err)
	return err
}

// Many reads keys in as few commands as the layout allows (PerRead),
// all in one pipeline: MGETs of at most layout.MGetChunk keys, or an
// HGETALL per collection. That is one round trip on a single server, one
// per node (in parallel) on a cluster, where each MGET holds keys of one
// hash slot. It returns each key's bytes, nil where Redis has none, the
// expiry of a copy of each key the caller may keep a copy of (keep[i];
// keep nil: every key), by a PTTL in the same pipeline when the entity
// learns its keys' TTLs, and the error of each key whose read failed, or
// a nil slice when none did. The keys of a node that is unreachable fail
// at once, without a command.
func (r *Reader) Many(ctx context.Context, keys []string, keep []bool) ([][]byte, Expiries, []error) {
	b := r.many(ctx, keys, keep, false)
	return b.raw, b.exps, b.errs
}

// Patient is Many for a caller that waits for a slow node, as Ask's
// patient read does: the batch is sent to every node, open breaker or
// not, and waited for within d, no longer, since a client's ReadTimeout
// may be anything; past d each key fails with breaker.NoAnswer, and the
// batch goes on without its caller on a goroutine of g, which Close waits
// for. Every key's copy is kept (Many's keep nil).
func (r *Reader) Patient(ctx context.Context, g *group.Group, keys []string, d time.Duration) ([][]byte, Expiries, []error) {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	b, started, ended := apart(g, wait.Done(), func() batch { return r.many(ctx, keys, nil, true) })
	switch {
	case !started:
		return nil, nil, r.each(keys, r.Closed)
	case !ended && ctx.Err() != nil:
		return nil, nil, r.each(keys, ctx.Err())
	case !ended:
		return nil, nil, r.each(keys, breaker.NoAnswer{Waited: d})
	}
	return b.raw, b.exps, b.errs
}

// batch is what a batch read returns: Many's three results.
type batch struct {
	raw  [][]byte
	exps Expiries
	errs []error
}

// apart runs read on a goroutine of g, which Close waits for, and waits
// for its batch until stop is closed; past that the read goes on without
// its caller. started is false when g is closing and read did not run,
// ended whether its batch came back.
func apart(g *group.Group, stop <-chan struct{}, read func() batch) (b batch, started, ended bool) {
	done := make(chan batch, 1)
	if !g.Go(func() { done <- read() }) {
		return batch{}, false, false
	}
	select {
	case b := <-done:
		return b, true, true
	case <-stop:
		return batch{}, true, false
	}
}

// each returns the errors of a batch of keys that all failed with err.
func (r *Reader) each(keys []string, err error) []error {
	errs := make([]error, len(keys))
	for i, k := range keys {
		errs[i] = operr.Of(r.Store.ReadOp(), k, err)
	}
	return errs
}

// many is Many; a patient batch is sent to a node whose breaker is open,
// and waits for its replies until ctx ends rather than until a breaker
// opens.
func (r *Reader) many(ctx context.Context, keys []string, keep []bool, patient bool) batch {
	vals := make([][]byte, len(keys))
	var exps Expiries
	if r.LearnsTTL {
		exps = make(Expiries, len(keys))
	}
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(keys))
		}
		if errs[i] == nil {
			errs[i] = err
		}
	}
	groups := Groups(keys, r.Cluster, r.Store.PerRead())
	pipe := r.Client.Pipeline()
	replies := make([]*layout.Reply, len(groups))
	nodes := make([]*track.Node, len(groups))
	for g, idx := range groups {
		nodes[g] = r.Nodes.Of(keys[idx[0]]) // one slot, or one node
		if !patient && nodes[g].Down(ctx) {
			continue
		}
		args := make([]string, len(idx))
		var kept []bool // nil: every key
		if keep != nil {
			kept = make([]bool, len(idx))
		}
		for j, i := range idx {
			args[j] = keys[i]
			if kept != nil {
				kept[j] = keep[i]
			}
		}
		replies[g] = r.Store.Queue(ctx, pipe, args, kept)
	}
	sent := r.Now()
	gaveUp := r.exec(ctx, pipe, nodes, patient)
	for g, idx := range groups {
		reply := replies[g]
		var got [][]byte
		var err error
		switch {
		case reply == nil:
			err = r.Refuse(nodes[g])
		case gaveUp != nil: // the replies may still come: none is read
			err = r.failed(ctx, nodes[g], gaveUp, patient)
			reply = nil
		default:
			if got, err = reply.Values(); err != nil {
				err = r.failed(ctx, nodes[g], err, patient)
			} else if len(got) != len(idx) { // only an MGET reads several keys
				err = fmt.Errorf("MGET of %d keys returned %d values", len(idx), len(got))
			}
		}
		for j, i := range idx {
			if err != nil {
				fail(i, operr.Of(r.Store.ReadOp(), keys[i], err))
			} else {
				vals[i] = got[j]
			}
		}
		if reply == nil || exps == nil {
			continue
		}
		// A key whose PTTL failed fails the read.
		for j, i := range idx {
			var perr error
			if exps[i], perr = reply.Expiry(j, sent); perr != nil {
				fail(i, operr.Of("pttl", keys[i], perr))
			}
		}
	}
	return batch{vals, exps, errs}
}

// ManyUntilOpened is Many of keys, failing with the first key's error,
// and given up when the breaker of a node holding a copy of a key opens
// (copied[i]: the i-th has one): as for one key, a copy beats waiting on
// a node that does not answer, and the caller decides whether it is
// served. keep is Many's. The read goes on without its caller, on a
// goroutine of g, which Close waits for.
func (r *Reader) ManyUntilOpened(ctx context.Context, g *group.Group, keys []string, copied, keep []bool) ([][]byte, Expiries, error) {
	opened, stop := context.WithCancel(context.Background())
	defer stop()
	first := -1
	seen := map[*track.Node]bool{}
	for i, key := range keys {
		if !copied[i] {
			continue
		}
		if first < 0 {
			first = i
		}
		if n := r.Nodes.Of(key); !seen[n] {
			seen[n] = true
			defer n.AfterOpened(stop)()
		}
	}
	var b batch
	if first < 0 {
		b = r.many(ctx, keys, keep, false)
	} else {
		var started, ended bool
		switch b, started, ended = apart(g, opened.Done(), func() batch { return r.many(ctx, keys, keep, false) }); {
		case !started:
			return nil, nil, operr.Of(r.Store.ReadOp(), "", r.Closed)
		case !ended, FirstError(b.errs) != nil && r.Nodes.Of(keys[first]).Unreachable():
			// Given up as the breaker opened, by this caller or by the
			// batch itself (exec): the copy's key is the one refused.
			return nil, nil, operr.Of(r.Store.ReadOp(), keys[first], r.Nodes.Of(keys[first]).Unavailable())
		}
	}
	if err := FirstError(b.errs); err != nil {
		return nil, nil, err
	}
	return b.raw, b.exps, nil
}

// FirstError returns the first error of errs, as Many returns them, nil
// when there is none.
func FirstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// exec sends the commands of a batch read, queued on pipe for nodes, and
// waits for their replies until ctx ends or, unless patient, one of those
// nodes' breakers opens (UntilOpened): a batch waits on a hung node no
// longer than a single read does. It returns the error of a batch given
// up (send.Apart), whose replies may not be read, nil otherwise.
func (r *Reader) exec(ctx context.Context, pipe redis.Pipeliner, nodes []*track.Node, patient bool) error {
	if pipe.Len() == 0 {
		return nil
	}
	rctx := ctx
	var releases []func(bool)
	if !patient {
		seen := make(map[*track.Node]bool, 1)
		for _, n := range nodes {
			if n == nil || seen[n] {
				continue
			}
			seen[n] = true
			var release func(bool)
			rctx, release = n.UntilOpened(rctx)
			releases = append(releases, release)
		}
	}
	var err error
	gaveUp := send.Apart(rctx, func() { _, err = pipe.Exec(rctx) })
	for _, release := range releases {
		release(gaveUp == nil)
	}
	if gaveUp != nil {
		return gaveUp
	}
	if err != nil && !(ctx.Err() == nil && rctx.Err() != nil) {
		r.Count(ctx, err)
	}
	return nil
}

// failed returns the cause of the error of a batch read's command on n
// that failed with err: the refusal of an unreachable node when its
// breaker opened while an impatient batch waited (exec), err otherwise,
// told to the breaker.
func (r *Reader) failed(ctx context.Context, n *track.Node, err error, patient bool) error {
	if !patient && n.Unreachable() && ctx.Err() == nil {
		return r.Refuse(n)
	}
	n.Failed(ctx, err)
	return err
}
