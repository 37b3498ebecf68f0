package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// mgetChunk bounds the keys of one MGET: a reply of a few hundred values
// keeps Redis's latency for other clients low, and batches of this size
// already make the round trip per key negligible.
const mgetChunk = 500

// mget reads keys with MGETs of at most mgetChunk keys, all in one
// pipeline: one round trip on a single server, one per node (in parallel)
// on a cluster, where each MGET holds keys of one hash slot. It returns
// each key's bytes, nil where Redis has none, the expiry of a copy of
// each (a PTTL per key in the same pipeline, when the entity learns its
// keys' TTLs), and the error of each key whose MGET failed, or a nil
// slice when none did. The keys of a node that is unreachable fail at
// once, without a command.
func (c *Cache[K, V]) mget(ctx context.Context, keys []string) ([][]byte, expiries, []error) {
	if c.hash != nil {
		return c.hgetallMany(ctx, keys)
	}
	vals := make([][]byte, len(keys))
	var errs []error
	groups := mgetGroups(keys, c.isCluster)
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(groups))
	nodes := make([]*node, len(groups))
	var lefts []*redis.DurationCmd
	if c.learnsTTL {
		lefts = make([]*redis.DurationCmd, len(keys))
	}
	for g, idx := range groups {
		nodes[g] = c.nodes.of(keys[idx[0]]) // one slot, or one node
		if nodes[g].Down(ctx) {
			continue
		}
		args := make([]string, len(idx))
		for j, i := range idx {
			args[j] = keys[i]
		}
		cmds[g] = pipe.MGet(ctx, args...)
		if lefts != nil {
			for _, i := range idx {
				lefts[i] = pipe.PTTL(ctx, keys[i])
			}
		}
	}
	sent := c.cfg.Clock.Now()
	c.execBatch(ctx, pipe, nodes)
	for g, idx := range groups {
		var res []any
		var err error
		if cmds[g] == nil {
			err = nodes[g].Refuse()
		} else if res, err = cmds[g].Result(); err != nil {
			err = c.batchFailed(ctx, nodes[g], err)
		}
		if err == nil && len(res) != len(idx) {
			err = fmt.Errorf("MGET of %d keys returned %d values", len(idx), len(res))
		}
		if err != nil {
			if errs == nil {
				errs = make([]error, len(keys))
			}
			for _, i := range idx {
				errs[i] = opErr("get", keys[i], err)
			}
			continue
		}
		for j, i := range idx {
			if s, ok := res[j].(string); ok {
				vals[i] = []byte(s)
			}
		}
	}
	exps, errs := learnExpiries(sent, keys, lefts, errs)
	return vals, exps, errs
}

// expiries holds the expiry of a copy of each key of a batch read (see
// expiresAt); nil when the entity learns no TTL, for which every copy's
// is 0.
type expiries []int64

func (x expiries) of(i int) int64 {
	if x == nil {
		return 0
	}
	return x[i]
}

// learnExpiries turns the replies of the PTTLs of a batch read sent at
// sent (nil where the key's read was not sent) into expiries. A key
// whose PTTL failed fails the read, with the error added to errs (made
// when nil), which it returns.
func learnExpiries(sent time.Time, keys []string, lefts []*redis.DurationCmd, errs []error) (expiries, []error) {
	if lefts == nil {
		return nil, errs
	}
	exps := make(expiries, len(keys))
	for i, left := range lefts {
		if left == nil {
			continue
		}
		if err := left.Err(); err != nil {
			if errs == nil {
				errs = make([]error, len(keys))
			}
			if errs[i] == nil {
				errs[i] = opErr("pttl", keys[i], err)
			}
			continue
		}
		exps[i] = expiresAt(sent, left.Val())
	}
	return exps, errs
}

// mgetGroups splits the indexes of keys into MGETs: chunks of mgetChunk
// in order, or, on a cluster, chunks of the keys of each hash slot.
func mgetGroups(keys []string, cluster bool) [][]int {
	var groups [][]int
	if !cluster {
		for start := 0; start < len(keys); start += mgetChunk {
			idx := make([]int, 0, min(mgetChunk, len(keys)-start))
			for i := start; i < min(start+mgetChunk, len(keys)); i++ {
				idx = append(idx, i)
			}
			groups = append(groups, idx)
		}
		return groups
	}
	bySlot := map[int]int{} // slot → its open group
	for i, k := range keys {
		s := hashSlot(k)
		g, ok := bySlot[s]
		if !ok || len(groups[g]) == mgetChunk {
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
func (c *Cache[K, V]) execBatch(ctx context.Context, pipe redis.Pipeliner, nodes []*node) {
	if pipe.Len() == 0 {
		return
	}
	rctx := ctx
	seen := make(map[*node]bool, 1)
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
func (c *Cache[K, V]) batchFailed(ctx context.Context, n *node, err error) error {
	if n.Unreachable() && ctx.Err() == nil {
		return n.Refuse()
	}
	n.Failed(ctx, err)
	return err
}
