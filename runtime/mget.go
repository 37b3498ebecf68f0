package runtime

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// mget reads keys in as few commands as the layout allows (PerRead),
// all in one pipeline: MGETs of at most layout.MGetChunk keys, or an
// HGETALL per collection. That is one round trip on a single server, one
// per node (in parallel) on a cluster, where each MGET holds keys of one
// hash slot. It returns each key's bytes, nil where Redis has none, the
// expiry of a copy of each (a PTTL per key in the same pipeline, when the
// entity learns its keys' TTLs), and the error of each key whose read
// failed, or a nil slice when none did. The keys of a node that is
// unreachable fail at once, without a command.
func (c *Cache[K, V]) mget(ctx context.Context, keys []string) ([][]byte, expiries, []error) {
	vals := make([][]byte, len(keys))
	var exps expiries
	if c.learnsTTL {
		exps = make(expiries, len(keys))
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
	groups := readGroups(keys, c.isCluster, c.store.PerRead())
	pipe := c.rdb.Pipeline()
	replies := make([]*layout.Reply, len(groups))
	nodes := make([]*track.Node, len(groups))
	for g, idx := range groups {
		nodes[g] = c.copies.nodes.Of(keys[idx[0]]) // one slot, or one node
		if nodes[g].Down(ctx) {
			continue
		}
		args := make([]string, len(idx))
		for j, i := range idx {
			args[j] = keys[i]
		}
		replies[g] = c.store.Queue(ctx, pipe, args)
	}
	sent := c.cfg.Clock.Now()
	c.execBatch(ctx, pipe, nodes)
	for g, idx := range groups {
		r := replies[g]
		var got [][]byte
		var err error
		if r == nil {
			err = c.count.refuse(nodes[g])
		} else if got, err = r.Values(); err != nil {
			err = c.batchFailed(ctx, nodes[g], err)
		} else if len(got) != len(idx) { // only an MGET reads several keys
			err = fmt.Errorf("MGET of %d keys returned %d values", len(idx), len(got))
		}
		for j, i := range idx {
			if err != nil {
				fail(i, opErr(c.store.ReadOp(), keys[i], err))
			} else {
				vals[i] = got[j]
			}
		}
		if r == nil || exps == nil {
			continue
		}
		// A key whose PTTL failed fails the read.
		for j, i := range idx {
			var perr error
			if exps[i], perr = r.Expiry(j, sent); perr != nil {
				fail(i, opErr("pttl", keys[i], perr))
			}
		}
	}
	return vals, exps, errs
}

// expiries holds the expiry of a copy of each key of a batch read (see
// layout.ExpiresAt); nil when the entity learns no TTL, for which every
// copy's is 0.
type expiries []int64

func (x expiries) of(i int) int64 {
	if x == nil {
		return 0
	}
	return x[i]
}

// readGroups splits the indexes of keys into the commands of a batch
// read, each of at most per keys: chunks in order, or, on a cluster,
// chunks of the keys of each hash slot.
func readGroups(keys []string, cluster bool, per int) [][]int {
	var groups [][]int
	if !cluster {
		for start := 0; start < len(keys); start += per {
			idx := make([]int, 0, min(per, len(keys)-start))
			for i := start; i < min(start+per, len(keys)); i++ {
				idx = append(idx, i)
			}
			groups = append(groups, idx)
		}
		return groups
	}
	bySlot := map[int]int{} // slot → its open group
	for i, k := range keys {
		s := track.HashSlot(k)
		g, ok := bySlot[s]
		if !ok || len(groups[g]) == per {
			g = len(groups)
			groups = append(groups, nil)
			bySlot[s] = g
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// firstError returns the first error of errs, nil when there is none.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// execBatch sends the commands of a batch read, queued on pipe for
// nodes, and waits for their replies until one of those nodes' breakers
// opens (untilOpened): a batch waits on a hung node no longer than a
// single read does.
func (c *Cache[K, V]) execBatch(ctx context.Context, pipe redis.Pipeliner, nodes []*track.Node) {
	if pipe.Len() == 0 {
		return
	}
	rctx := ctx
	seen := make(map[*track.Node]bool, 1)
	for _, n := range nodes {
		if n == nil || seen[n] {
			continue
		}
		seen[n] = true
		var release func()
		rctx, release = n.UntilOpened(rctx)
		defer release()
	}
	if _, err := pipe.Exec(rctx); err != nil && !(ctx.Err() == nil && rctx.Err() != nil) {
		c.countRedisError(ctx, err)
	}
}

// batchFailed returns the cause of the error of a batch read's command on
// n that failed with err: the refusal of an unreachable node when its
// breaker opened while the batch waited (execBatch), err otherwise, told
// to the breaker.
func (c *Cache[K, V]) batchFailed(ctx context.Context, n *track.Node, err error) error {
	if n.Unreachable() && ctx.Err() == nil {
		return c.count.refuse(n)
	}
	n.Failed(ctx, err)
	return err
}
