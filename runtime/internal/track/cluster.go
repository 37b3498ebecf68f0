package track

import (
	"context"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"
)

// Topology timing: the hub reads a cluster's topology every
// topologyEvery, and within topologyEveryDown of a node's answering a
// session's EXISTS with MOVED or ASK (the key's slot moved, or is moving:
// reread), so a slot that moves is attributed to its new owner soon after
// its first held key is. The reading is for the copies' availability,
// not their freshness: writes on the new owner are heard before it, or
// the copies are not served:
//   - a slot moved by resharding leaves its old master key by key, each
//     deleted there as MIGRATE moves it (a master refuses to give a slot
//     up while it holds keys of it), which sends the key's invalidation;
//     asked to track the key again, the old master answers ASK or MOVED,
//     and no copy of it is verified until the hub names the new owner
//     and that owner's session confirms it tracks the key;
//   - a replica promoted in its master's place tracked the master's held
//     keys already (Node.Track asks the replicas too), and hears their
//     writes from its first.
//
// While a master that owns slots cannot be reached it reads every
// topologyEveryDown: its replica may be promoted at any moment, and until
// the hub knows, the dead master's keys fail fast instead of being read
// from their new owner.
//
// Every reading is a command each instance holding copies sends the
// cluster: 4 a second per instance at the 250 ms of before.
const (
	topologyEvery     = 2 * time.Second
	topologyEveryDown = 25 * time.Millisecond
)

// nudgeFor is how long after slots moved the hub checks that the
// caller's client followed, every settleEvery until it has.
const (
	nudgeFor    = 5 * time.Second
	settleEvery = 250 * time.Millisecond
)

// clusterNode is a node the hub listens to, with what stops it.
type clusterNode struct {
	n      *Node
	stop   context.CancelFunc
	client *redis.Client // for the topology
	probe  *redis.Client // the breaker's line's alone (probeClient)
	line   socketLine
	l      *listener
}

// followCluster follows r's cluster from the first copy kept: it reads
// the topology every topologyEvery, readies a session for each new node,
// stops those of nodes that left, and has the stores make the copies of
// keys whose slot changed owner unverified until the new owner's session
// has vouched for them (reloaded once the caller's client follows).
// While any copy is kept, every node has a session, replicas and masters
// without slots included (followInCluster): a replica tracks its master's
// held keys, so when it is promoted its session already hears them, and a
// slot's new owner tracks its keys as soon as the hub names it.
//
// Once no copy has been kept for lingerFor it stops, and forgets the
// topology: every key is on Nodes.One again, which no session covers, and
// the next copy has the topology read anew (followFrom) before a session
// vouches for it. A table kept while nobody read it could send a copy to
// a node that no longer owns its slot.
func (h *Hub) followCluster(r *redis.ClusterClient) {
	known := map[string]*clusterNode{}
	defer func() {
		for _, cn := range known {
			cn.close()
		}
		h.mu.Lock()
		clear(h.cluster)
		h.follows = false
		h.mu.Unlock()
		h.Nodes.slots.Store(nil)
		h.Nodes.One.wanted(h.opts.Now(), false)
	}()
	t := time.NewTimer(0)
	defer t.Stop()
	var (
		changed time.Time // when slots last moved
		pending bool      // copies to reload once the caller's client follows
		read    time.Time // when the topology was last read
	)
	idle := newLingering(h, nil)
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-h.moved:
			t.Reset(max(0, topologyEveryDown-time.Since(read)))
			continue
		case <-t.C:
		}
		if idle.over() {
			return
		}
		read = time.Now()
		t.Reset(h.topologyPace())
		if shards, err := readTopology(h.ctx, r, known); err == nil && len(shards) > 0 {
			if h.applyTopology(shards, known, r.Options()) {
				changed, pending = h.opts.Now(), true
			}
		}
		// Reloading before the client follows would read the moved keys
		// from their old master, dead after a failover, and count
		// failures against copies that are fine.
		if h.opts.Now().Sub(changed) < nudgeFor && !h.inStep(r) {
			t.Reset(min(h.topologyPace(), settleEvery))
			continue
		}
		if pending {
			h.each(func(s Store) { s.Settled(h.ctx) })
			pending = false
		}
	}
}

// reread has the topology read soon: a node sent a key elsewhere.
func (h *Hub) reread() {
	select {
	case h.moved <- struct{}{}:
	default:
	}
}

// followFrom starts followCluster unless it runs: a copy of a key on
// Nodes.One is about to be kept.
func (h *Hub) followFrom(r *redis.ClusterClient) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.follows || h.ctx.Err() != nil {
		return
	}
	h.follows = true
	h.Nodes.One.wanted(h.opts.Now(), true)
	if !h.g.Go(func() { h.followCluster(r) }) {
		h.follows = false
	}
}

// readTopology asks the nodes it knows, in no set order and skipping
// those whose breaker is open, for the topology, and the caller's client
// when none answers (before the first reading). Not the caller's client
// first: it sends the command to the master of a random slot as it last
// knew them, which after a master's death may be the dead one, and tries
// again there with go-redis's backoff.
func readTopology(ctx context.Context, r *redis.ClusterClient, known map[string]*clusterNode) ([]Shard, error) {
	for _, cn := range known {
		if cn.n.Unreachable() {
			continue
		}
		if shards, err := ReadShards(ctx, cn.client); err == nil && len(shards) > 0 {
			return shards, nil
		}
	}
	return ReadShards(ctx, r)
}

// topologyPace is how long until the next topology reading.
func (h *Hub) topologyPace() time.Duration {
	if h.opts.TopologyEvery > 0 {
		return h.opts.TopologyEvery
	}
	for _, n := range h.Nodes.All() {
		if n.Unreachable() {
			return topologyEveryDown
		}
	}
	return topologyEvery
}

// applyTopology installs the slot table and the sessions shards describe,
// and reports whether slots moved, after telling the stores which. Until
// the first reading every key is on h.Nodes.One, which no session covers.
func (h *Hub) applyTopology(shards []Shard, known map[string]*clusterNode, opts *redis.ClusterOptions) bool {
	table := new([SlotCount]*Node)
	for i := range table {
		table[i] = h.Nodes.One
	}
	present := map[string]bool{}
	var joined []*Node // replicas new to their master: they track its keys
	for _, sh := range shards {
		var master *Node
		var replicas []*Node
		for i, addr := range sh.Addrs {
			cn := known[addr]
			if cn == nil {
				cn = h.watchNode(addr, opts)
				known[addr] = cn
			}
			present[addr] = true
			if i == 0 {
				master = cn.n
				for _, r := range sh.Slots {
					for s := max(r[0], 0); s <= min(r[1], SlotCount-1); s++ {
						table[s] = cn.n
					}
				}
				continue
			}
			replicas = append(replicas, cn.n)
			cn.n.replicas.Store(nil) // a demoted master's are its new master's now
			if cn.n.master.Swap(master) != master {
				joined = append(joined, cn.n)
			}
		}
		if master != nil {
			master.master.Store(nil)
			master.replicas.Store(&replicas)
		}
	}
	defer func() {
		for _, r := range joined {
			r.trackHere(h.hot(r))
		}
	}()
	for addr, cn := range known {
		if !present[addr] {
			cn.close()
			h.mu.Lock()
			delete(h.cluster, cn.l)
			h.mu.Unlock()
			delete(known, addr)
		}
	}
	old := h.Nodes.slots.Load()
	if old != nil && *old == *table {
		return false
	}
	h.Nodes.slots.Store(table)
	if old == nil {
		return false
	}
	moved := func(key string) bool { s := HashSlot(key); return old[s] != table[s] }
	h.each(func(s Store) { s.Moved(moved) })
	return true
}

// inStep reports whether the caller's client sends every hot key to the
// master the hub's last reading says owns it, and has the client reload
// its slot map when not. The client learns of a move only from a MOVED
// reply, or once a minute: a master that died sends none, and a reload
// asks one node at random, which may not have heard of the promotion yet.
// Until it follows, the instance's reads of the dead master's keys fail
// while the other instances write to the new one.
func (h *Hub) inStep(r *redis.ClusterClient) bool {
	table := h.Nodes.slots.Load()
	if table == nil {
		return true
	}
	var hot []string
	h.each(func(s Store) { hot = append(hot, s.Hot()...) })
	for _, key := range hot {
		owner := table[HashSlot(key)]
		if owner == h.Nodes.One {
			continue
		}
		if m, err := r.MasterForKey(h.ctx, key); err != nil || m.Options().Addr != owner.Name {
			r.ReloadState(h.ctx)
			return false
		}
	}
	return true
}

// watchNode starts the session of the node at addr.
func (h *Hub) watchNode(addr string, opts *redis.ClusterOptions) *clusterNode {
	o := ClusterNodeOptions(opts, addr)
	ctx, stop := context.WithCancel(h.ctx)
	client := redis.NewClient(breaker.ProbeOptions(o))
	probe, sock := probeClient(o)
	line := socketLine{probe.Subscribe(h.ctx), sock}
	warmUp(h.ctx, line)
	n := NewNode(ctx, addr, h.opts.Now(), h.opts.wrap(line), &h.brk)
	n.keyed.Store(!h.fallback.Load())
	l := &listener{name: addr, n: n, ctx: ctx, dial: func(ctx context.Context, _ []string) (session, error) {
		return keyed{o: o, keys: func() []string { return h.hot(n) }, via: h.opts.Track, cluster: true, channels: h.opts.Mode == KeyChannels}.listener()(ctx)
	}}
	if h.fallback.Load() {
		l.dial = h.pubsubDial
	}
	h.followInCluster(l)
	return &clusterNode{n: n, stop: stop, client: client, probe: probe, line: line, l: l}
}

// close stops following the node.
func (cn *clusterNode) close() {
	cn.stop()
	cn.line.Close()
	cn.probe.Close()
	cn.client.Close()
}
