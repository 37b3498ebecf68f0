package runtime

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// nodeSet says which node covers a key: the one node of a single server,
// of Pub/Sub and of invalidation off, or on a cluster with tracking the
// master that owns the key's slot, as the runtime last saw the topology.
type nodeSet struct {
	one   *node
	slots atomic.Pointer[[slotCount]*node] // nil unless a cluster's topology is followed
}

func (s *nodeSet) of(key string) *node {
	if t := s.slots.Load(); t != nil {
		return t[hashSlot(key)]
	}
	return s.one
}

func newNode(ctx context.Context, name string, ping func(context.Context) error) *node {
	n := &node{name: name}
	n.ping = ping
	n.ctx = ctx
	return n
}

// topologyEvery paces the reading of a cluster's slots: a slot that moves
// or a master that appears is covered within this long.
const topologyEvery = 250 * time.Millisecond

// clusterNode is a master the runtime listens to, with what stops it.
type clusterNode struct {
	n      *node
	stop   context.CancelFunc
	client *redis.Client // for the breaker's probe
}

// followCluster keeps one session on every master of r: it reads the slot
// table every topologyEvery, starts a session for each new master, stops
// those of nodes that own no slot any more, and makes the copies of keys
// whose slot changed owner unverified until the new owner's session has
// vouched for them (revalidated at once).
func (c *Cache[K, V]) followCluster(r *redis.ClusterClient, prefix string) {
	defer c.wg.Done()
	opts := r.Options()
	known := map[string]*clusterNode{}
	defer func() {
		for _, cn := range known {
			cn.stop()
			cn.client.Close()
		}
	}()
	// Until the first reading, every key is on a node no session covers.
	uncovered := c.nodes.one
	t := time.NewTicker(topologyEvery)
	defer t.Stop()
	for {
		if slots, err := r.ClusterSlots(c.ctx).Result(); err == nil && len(slots) > 0 {
			c.applyTopology(slots, known, uncovered, opts, prefix)
		}
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// applyTopology installs the slot table slots describes.
func (c *Cache[K, V]) applyTopology(slots []redis.ClusterSlot, known map[string]*clusterNode, uncovered *node, opts *redis.ClusterOptions, prefix string) {
	table := new([slotCount]*node)
	for i := range table {
		table[i] = uncovered
	}
	owners := map[string]bool{}
	for _, s := range slots {
		if len(s.Nodes) == 0 || s.Start < 0 || s.End >= slotCount || s.Start > s.End {
			continue
		}
		addr := s.Nodes[0].Addr
		cn := known[addr]
		if cn == nil {
			cn = c.watchMaster(addr, opts, prefix)
			known[addr] = cn
		}
		owners[addr] = true
		for i := s.Start; i <= s.End; i++ {
			table[i] = cn.n
		}
	}
	old := c.nodes.slots.Load()
	if old != nil && *old == *table {
		return
	}
	c.nodes.slots.Store(table)
	for addr, cn := range known {
		if !owners[addr] {
			cn.stop()
			cn.client.Close()
			delete(known, addr)
		}
	}
	if old == nil {
		return
	}
	var moved []*hotEntry[K]
	for _, e := range c.det.hot.Load().m {
		if s := hashSlot(e.key); old[s] != table[s] {
			c.revoke(e)
			moved = append(moved, e)
		}
	}
	if len(moved) > 0 {
		c.reload(c.ctx, moved)
	}
}

// watchMaster starts the session of the master at addr.
func (c *Cache[K, V]) watchMaster(addr string, opts *redis.ClusterOptions, prefix string) *clusterNode {
	o := clusterNodeOptions(opts, addr)
	ctx, stop := context.WithCancel(c.ctx)
	probe := *o
	probe.PoolSize, probe.MaxRetries = 1, -1
	client := redis.NewClient(&probe)
	n := newNode(ctx, addr, func(ctx context.Context) error { return client.Ping(ctx).Err() })
	c.spawnListener(ctx, listener{name: addr, n: n, connect: trackingListener(o, prefix, nil)})
	return &clusterNode{n: n, stop: stop, client: client}
}

// clusterNodeOptions are the options of a connection to one node of a
// cluster client's cluster.
func clusterNodeOptions(o *redis.ClusterOptions, addr string) *redis.Options {
	return &redis.Options{
		Addr:                         addr,
		Dialer:                       o.Dialer,
		Username:                     o.Username,
		Password:                     o.Password,
		CredentialsProvider:          o.CredentialsProvider,
		CredentialsProviderContext:   o.CredentialsProviderContext,
		StreamingCredentialsProvider: o.StreamingCredentialsProvider,
		DialTimeout:                  o.DialTimeout,
		ReadTimeout:                  o.ReadTimeout,
		WriteTimeout:                 o.WriteTimeout,
		TLSConfig:                    o.TLSConfig,
		ClientName:                   o.ClientName,
	}
}
