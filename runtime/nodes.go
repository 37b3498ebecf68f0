package runtime

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"

	"github.com/redis/go-redis/v9"
)

// nodeSet says which node covers a key: the one node of a single server,
// of Pub/Sub and of invalidation off, or on a cluster with tracking the
// master that owns the key's slot, as the runtime last saw the topology.
type nodeSet struct {
	one   *node
	slots atomic.Pointer[[track.SlotCount]*node] // nil unless a cluster's topology is followed
}

func (s *nodeSet) of(key string) *node {
	if t := s.slots.Load(); t != nil {
		return t[track.HashSlot(key)]
	}
	return s.one
}

// all returns every node keys are on now, each once: the masters that own
// slots on a cluster, and the one node otherwise or for slots no master
// owns.
func (s *nodeSet) all() []*node {
	t := s.slots.Load()
	if t == nil {
		return []*node{s.one}
	}
	var out []*node
	for i, n := range t {
		if i > 0 && n == t[i-1] || slices.Contains(out, n) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// newNode returns the node called name, uncovered since now, whose
// breaker asks it with ping until ctx ends.
func newNode(ctx context.Context, name string, now time.Time, ping func(context.Context) error, brk *breaker.Config) *node {
	return &node{name: name, since: now, Breaker: breaker.New(ctx, name, ping, brk)}
}

// Topology timing: the runtime reads a cluster's topology every
// topologyEvery, so a slot that moves is attributed to its new owner
// within that long; writes on the new owner are heard before that, since
// every node of the cluster, replicas and masters without slots included,
// has a session of its own. While a master that owns slots cannot be
// reached it reads every topologyEveryDown: its replica may be promoted
// at any moment, and until the runtime knows, the dead master's keys
// fail fast instead of being read from their new owner.
const (
	topologyEvery     = 250 * time.Millisecond
	topologyEveryDown = 25 * time.Millisecond
)

// clusterNode is a node the runtime listens to, with what stops it.
type clusterNode struct {
	n      *node
	stop   context.CancelFunc
	client *redis.Client // for the breaker's probe
}

// followCluster keeps one session on every node of r's cluster: it reads
// the topology every topologyEvery, starts a session for each new node,
// stops those of nodes that left, and makes the copies of keys whose slot
// changed owner unverified until the new owner's session has vouched for
// them (revalidated at once). Replicas get sessions too: a replica hears
// the writes it replicates, so when it is promoted its session is already
// live.
func (c *Cache[K, V]) followCluster(r *redis.ClusterClient, prefix string) {
	opts := r.Options()
	known := map[string]*clusterNode{}
	defer func() {
		for _, cn := range known {
			cn.stop()
			cn.client.Close()
		}
	}()
	t := time.NewTimer(0)
	defer t.Stop()
	var (
		changed time.Time                     // when slots last moved
		moved   = map[*hotEntry[K]]struct{}{} // copies to revalidate once the caller's client follows
	)
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(c.topologyPace())
		if shards, err := readTopology(c.ctx, r, known); err == nil && len(shards) > 0 {
			if es, ok := c.applyTopology(shards, known, opts, prefix); ok {
				changed = c.cfg.Clock.Now()
				for _, e := range es {
					moved[e] = struct{}{}
				}
			}
		}
		// Revalidating before the client follows would read the moved
		// keys from their old master, dead after a failover, and count
		// failures against copies that are fine.
		if c.cfg.Clock.Now().Sub(changed) < nudgeFor && !c.inStep(r) {
			continue
		}
		if len(moved) > 0 {
			c.reload(c.ctx, slices.Collect(maps.Keys(moved)))
			clear(moved)
		}
	}
}

// readTopology asks the nodes it knows, in no set order and skipping
// those whose breaker is open, for the topology, and the caller's client
// when none answers (before the first reading). Not the caller's client
// first: it sends the command to the master of a random slot as it last
// knew them, which after a master's death may be the dead one, and tries
// again there with go-redis's backoff.
func readTopology(ctx context.Context, r *redis.ClusterClient, known map[string]*clusterNode) ([]track.Shard, error) {
	for _, cn := range known {
		if cn.n.Unreachable() {
			continue
		}
		if shards, err := track.ReadShards(ctx, cn.client); err == nil && len(shards) > 0 {
			return shards, nil
		}
	}
	return track.ReadShards(ctx, r)
}

// topologyPace is how long until the next topology reading.
func (c *Cache[K, V]) topologyPace() time.Duration {
	if c.cfg.topologyEvery > 0 {
		return c.cfg.topologyEvery
	}
	for _, n := range c.nodes.all() {
		if n.Unreachable() {
			return topologyEveryDown
		}
	}
	return topologyEvery
}

// applyTopology installs the slot table and the sessions shards describe,
// and reports whether slots moved, with the hot keys whose copies it made
// unverified because their slot did. Until the first reading every key is
// on c.nodes.one, which no session covers.
func (c *Cache[K, V]) applyTopology(shards []track.Shard, known map[string]*clusterNode, opts *redis.ClusterOptions, prefix string) ([]*hotEntry[K], bool) {
	table := new([track.SlotCount]*node)
	for i := range table {
		table[i] = c.nodes.one
	}
	present := map[string]bool{}
	for _, sh := range shards {
		for i, addr := range sh.Addrs {
			cn := known[addr]
			if cn == nil {
				cn = c.watchNode(addr, opts, prefix)
				known[addr] = cn
			}
			present[addr] = true
			if i > 0 {
				continue
			}
			for _, r := range sh.Slots {
				for s := max(r[0], 0); s <= min(r[1], track.SlotCount-1); s++ {
					table[s] = cn.n
				}
			}
		}
	}
	for addr, cn := range known {
		if !present[addr] {
			cn.stop()
			cn.client.Close()
			delete(known, addr)
		}
	}
	old := c.nodes.slots.Load()
	if old != nil && *old == *table {
		return nil, false
	}
	c.nodes.slots.Store(table)
	if old == nil {
		return nil, false
	}
	var moved []*hotEntry[K]
	for _, e := range c.det.hot.Load().m {
		if s := track.HashSlot(e.key); old[s] != table[s] {
			c.revoke(e)
			moved = append(moved, e)
		}
	}
	return moved, true
}

// nudgeFor is how long after slots moved the runtime checks that the
// caller's client followed.
const nudgeFor = 5 * time.Second

// inStep reports whether the caller's client sends every hot key to the
// master the runtime's last reading says owns it, and has the client
// reload its slot map when not. The client learns of a move only from a
// MOVED reply, or once a minute: a master that died sends none, and a
// reload asks one node at random, which may not have heard of the
// promotion yet. Until it follows, the instance's reads of the dead
// master's keys fail while the other instances write to the new one.
func (c *Cache[K, V]) inStep(r *redis.ClusterClient) bool {
	table := c.nodes.slots.Load()
	if table == nil {
		return true
	}
	for _, e := range c.det.hot.Load().m {
		owner := table[track.HashSlot(e.key)]
		if owner == c.nodes.one {
			continue
		}
		if m, err := r.MasterForKey(c.ctx, e.key); err != nil || m.Options().Addr != owner.name {
			r.ReloadState(c.ctx)
			return false
		}
	}
	return true
}

// watchNode starts the session of the node at addr.
func (c *Cache[K, V]) watchNode(addr string, opts *redis.ClusterOptions, prefix string) *clusterNode {
	o := track.ClusterNodeOptions(opts, addr)
	ctx, stop := context.WithCancel(c.ctx)
	client := redis.NewClient(breaker.ProbeOptions(o))
	ping := func(ctx context.Context) error { return client.Ping(ctx).Err() }
	n := newNode(ctx, addr, c.cfg.Clock.Now(), ping, &c.breakers)
	c.spawnListener(ctx, listener{name: addr, n: n, connect: trackingListener(o, prefix, nil)})
	return &clusterNode{n: n, stop: stop, client: client}
}
