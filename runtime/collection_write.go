package runtime

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// ownerWrite is one run of the write script for owner k (see
// layout.Hash.SetItems, DelItems).
type ownerWrite[K comparable, V any] struct {
	k K
	w layout.Write
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
func (col *Collection[K, F, V]) writeOwners(ctx context.Context, op string, ws []ownerWrite[K, map[F]*V]) error {
	c := col.c
	for _, w := range ws {
		if n := c.copies.nodes.Of(w.w.Key); n.Down(ctx) {
			return opErr(op, w.w.Key, c.count.refuse(n))
		}
	}
	ts := make([]token, len(ws))
	for i, w := range ws {
		ts[i] = c.copies.begin(w.w.Key)
	}
	var cmds []*redis.Cmd
	if len(ws) == 1 {
		cmds = []*redis.Cmd{col.store.Run(ctx, c.rdb, ws[0].w)}
	} else {
		writes := make([]layout.Write, len(ws))
		for i, w := range ws {
			writes[i] = w.w
		}
		cmds = col.store.RunMany(ctx, c.rdb, writes)
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				c.countRedisError(ctx, cmd.Err()) // once for the pipeline
				break
			}
		}
	}
	var first error
	var hot []*hotEntry[K]
	for i, w := range ws {
		key := w.w.Key
		err := cmds[i].Err()
		switch {
		case err == nil:
			c.copies.applied(w.k, key, ts[i], w.apply)
			if e := c.det.lookup(w.k); e != nil {
				hot = append(hot, e)
			}
		case !breaker.NotSent(err):
			c.copies.uncertain(w.k, key)
		}
		if err != nil {
			if len(ws) == 1 {
				c.countRedisError(ctx, err)
			}
			c.copies.nodes.Of(key).Failed(ctx, err)
			if first == nil {
				first = opErr(op, key, err)
			}
			continue
		}
		c.announce(ctx, key)
	}
	// A hot owner's copy is read back at once: it holds this write, but
	// other writers' items only as far as the copy did, so until then it
	// is served only while Redis cannot be reached.
	c.reload(ctx, hot, false)
	return first
}
