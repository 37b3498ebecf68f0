package runtime

import (
	"context"
	"net"
	"slices"
	"strconv"
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

// newNode returns the node called name, uncovered since now.
func newNode(ctx context.Context, name string, now time.Time, ping func(context.Context) error) *node {
	n := &node{name: name, since: now}
	n.ping = ping
	n.ctx = ctx
	n.rearm()
	return n
}

// topologyEvery paces the reading of a cluster's topology: a slot that
// moves is attributed to its new owner within this long. Writes on the new
// owner are heard before that, since every node of the cluster, replicas
// and masters without slots included, has a session of its own.
const topologyEvery = 250 * time.Millisecond

// clusterNode is a node the runtime listens to, with what stops it.
type clusterNode struct {
	n      *node
	stop   context.CancelFunc
	client *redis.Client // for the breaker's probe
}

// shard is one master's slots and the addresses of its nodes, the
// master's first.
type shard struct {
	slots [][2]int
	addrs []string
}

// clusterShards reads the topology: CLUSTER SHARDS (Redis 7), which lists
// masters that own no slot yet, or CLUSTER SLOTS before it.
func clusterShards(ctx context.Context, r *redis.ClusterClient) ([]shard, error) {
	if shards, err := r.ClusterShards(ctx).Result(); err == nil {
		out := make([]shard, 0, len(shards))
		for _, cs := range shards {
			var sh shard
			for _, n := range cs.Nodes { // the master first
				// A master that fails keeps its slots until a replica is
				// promoted: its keys stay on it, whose breaker makes
				// their reads fail fast, and not on a replica that
				// cannot serve them yet and whose breaker is closed.
				if n.Health != "online" && (n.Role != "master" || len(cs.Slots) == 0) {
					continue
				}
				addr := net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
				if n.Role == "master" {
					sh.addrs = append([]string{addr}, sh.addrs...)
				} else {
					sh.addrs = append(sh.addrs, addr)
				}
			}
			for _, sr := range cs.Slots {
				sh.slots = append(sh.slots, [2]int{int(sr.Start), int(sr.End)})
			}
			out = append(out, sh)
		}
		return out, nil
	}
	slots, err := r.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	out := make([]shard, 0, len(slots))
	for _, s := range slots {
		sh := shard{slots: [][2]int{{s.Start, s.End}}}
		for _, n := range s.Nodes {
			sh.addrs = append(sh.addrs, n.Addr)
		}
		out = append(out, sh)
	}
	return out, nil
}

// followCluster keeps one session on every node of r's cluster: it reads
// the topology every topologyEvery, starts a session for each new node,
// stops those of nodes that left, and makes the copies of keys whose slot
// changed owner unverified until the new owner's session has vouched for
// them (revalidated at once). Replicas get sessions too: a replica hears
// the writes it replicates, so when it is promoted its session is already
// live.
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
	t := time.NewTicker(topologyEvery)
	defer t.Stop()
	for {
		if shards, err := clusterShards(c.ctx, r); err == nil && len(shards) > 0 {
			c.applyTopology(r, shards, known, opts, prefix)
		}
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// applyTopology installs the slot table and the sessions shards describe.
// Until the first reading every key is on c.nodes.one, which no session
// covers.
func (c *Cache[K, V]) applyTopology(r *redis.ClusterClient, shards []shard, known map[string]*clusterNode, opts *redis.ClusterOptions, prefix string) {
	table := new([slotCount]*node)
	for i := range table {
		table[i] = c.nodes.one
	}
	present := map[string]bool{}
	for _, sh := range shards {
		for i, addr := range sh.addrs {
			cn := known[addr]
			if cn == nil {
				cn = c.watchNode(addr, opts, prefix)
				known[addr] = cn
			}
			present[addr] = true
			if i > 0 {
				continue
			}
			for _, r := range sh.slots {
				for s := max(r[0], 0); s <= min(r[1], slotCount-1); s++ {
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
		return
	}
	c.nodes.slots.Store(table)
	if old == nil {
		return
	}
	// The caller's client learns of a move only from a MOVED reply, or
	// once a minute: a master that died, and whose replica took over,
	// sends none, and every command for its slots would fail on the dead
	// address meanwhile, the reloads of the moved copies below included.
	r.ReloadState(c.ctx)
	var moved []*hotEntry[K]
	for _, e := range c.det.hot.Load().m {
		if s := hashSlot(e.key); old[s] != table[s] {
			c.revoke(e)
			moved = append(moved, e)
		}
	}
	c.reload(c.ctx, moved)
}

// watchNode starts the session of the node at addr.
func (c *Cache[K, V]) watchNode(addr string, opts *redis.ClusterOptions, prefix string) *clusterNode {
	o := clusterNodeOptions(opts, addr)
	ctx, stop := context.WithCancel(c.ctx)
	client := redis.NewClient(probeOptions(o))
	ping := func(ctx context.Context) error { return client.Ping(ctx).Err() }
	n := newNode(ctx, addr, c.cfg.Clock.Now(), ping)
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
