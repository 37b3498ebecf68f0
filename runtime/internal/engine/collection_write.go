package engine

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/fresh"
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

// writeOwners runs the write script for each of ws through the write
// path (write.go), in one round trip (one pipeline when there are
// several): each landed write is applied to its owner's local copy
// (applied), and a hot owner's is then read back to be verified again.
func (col *Collection[K, F, V]) writeOwners(ctx context.Context, op string, ows []ownerWrite[K, map[F]*V]) error {
	c := col.c
	ws := make([]*write[K, map[F]*V], len(ows))
	var hot []*fresh.Entry[K]
	for i, ow := range ows {
		w := &write[K, map[F]*V]{k: ow.k, key: ow.w.Key, also: c.writes.neighbours(ow.w.Key)}
		w.land = func(t fresh.Token) {
			c.copies.Applied(ow.k, ow.w.Key, t, ow.apply)
			if e := c.det.Lookup(ow.k); e != nil {
				hot = append(hot, e)
			}
		}
		ws[i] = w
	}
	errs, refused := c.writes.commit(ctx, ws, func(ctx context.Context) {
		var cmds []*redis.Cmd
		if len(ows) == 1 && len(ws[0].also) == 0 {
			cmds = []*redis.Cmd{col.layout.Run(ctx, c.rdb, ows[0].w)}
		} else {
			writes := make([]layout.Write, len(ows))
			for i, ow := range ows {
				writes[i] = ow.w
			}
			// The neighbouring versions' hashes are deleted in the same
			// round trip, as a Set deletes their rows (beside).
			cmds = col.layout.RunMany(ctx, c.rdb, writes, func(p redis.Pipeliner) {
				for _, w := range ws {
					w.after = c.writes.beside(ctx, p, w)
				}
			})
		}
		for i, w := range ws {
			w.cmd = cmds[i]
		}
	})
	if refused != nil {
		return opErr(op, ows[0].w.Key, refused)
	}
	// A hot owner's copy is read back at once: it holds this write, but
	// other writers' items only as far as the copy did, so until then it
	// is served only while Redis cannot be reached.
	c.refresh.reload(ctx, hot, false)
	for i, err := range errs {
		if err != nil {
			return opErr(op, ows[i].w.Key, err)
		}
	}
	return nil
}
