package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Cluster is a local Redis Cluster, each node a private redis-server on a
// free loopback port, joined with redis-cli --cluster create: masters,
// and optionally replicas of each.
type Cluster struct {
	Addrs []string // every node's, in launch order (roles change with failovers: see ShardOf)
	Nodes []*Server
}

// clusterArgs are the redis-server arguments of a cluster node. The node
// keeps its identity in nodes.conf in its own directory, so a node killed
// and relaunched rejoins as itself.
var clusterArgs = []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
	"--repl-diskless-sync-delay", "0"}

// StartCluster starts a cluster of masters for t and stops it when t ends.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	c, err := LaunchCluster(masters, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// LaunchCluster is StartCluster for a program, with replicasPerMaster
// replicas of each master, synced before it returns; the caller stops it.
// A replica is what CLUSTER FAILOVER promotes, and what the cluster
// promotes itself two node timeouts (2s) after its master stops answering.
func LaunchCluster(masters, replicasPerMaster int) (*Cluster, error) {
	cli, err := binary("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("%w (the cluster tests need redis-cli too; it comes with redis-server)", err)
	}
	c := &Cluster{}
	for range masters * (1 + replicasPerMaster) {
		s, err := Launch(clusterArgs...)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	// redis-cli picks the masters and gives each its replicas.
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %v: %s", err, out)
	}
	if err := c.waitReady(masters * replicasPerMaster); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}

// waitReady waits until every node reports the cluster up and agrees on
// the slots, and every replica has a live link to its master and is known
// as a replica by every node, so the first command of a test does not
// meet a half-formed cluster, a topology read from any node lists the
// replicas, and a failover has a replica to promote.
func (c *Cluster) waitReady(replicas int) error {
	return poll("cluster on "+strings.Join(c.Addrs, ",")+" to be ready", func(ctx context.Context) bool {
		synced := 0
		for _, n := range c.Nodes {
			rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
			info, err := rdb.ClusterInfo(ctx).Result()
			repl, rerr := rdb.Info(ctx, "replication").Result()
			nodes, nerr := rdb.ClusterNodes(ctx).Result()
			rdb.Close()
			if err != nil || rerr != nil || nerr != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.Nodes))) {
				return false
			}
			if strings.Count(nodes, "slave") != replicas {
				return false
			}
			if strings.Contains(repl, "master_link_status:up") {
				synced++
			}
		}
		return synced == replicas
	})
}

// Client returns a cluster client that is closed when t ends. Each client
// gets a copy of the seed addresses: go-redis's ClusterClient appends the
// nodes it discovers to the Addrs slice it was given, so two clients
// sharing one with spare capacity race on it.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Seeds()})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// Seeds returns a copy of the cluster's addresses, for a client's
// ClusterOptions.Addrs (see Client).
func (c *Cluster) Seeds() []string { return slices.Clone(c.Addrs) }

// Node returns the node listening on addr, or nil.
func (c *Cluster) Node(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// Shard is a master, its replicas, and the ranges of slots it owns.
type Shard struct {
	Master   *Server
	Replicas []*Server
	Slots    [][2]int // first and last slot of each range
}

// ShardOf returns the shard that owns slot now, asking any node that
// answers.
func (c *Cluster) ShardOf(ctx context.Context, slot int) (Shard, error) {
	slots, err := c.slots(ctx)
	if err != nil {
		return Shard{}, err
	}
	owner := ""
	for _, r := range slots {
		if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
			owner = r.Nodes[0].Addr
		}
	}
	if owner == "" {
		return Shard{}, fmt.Errorf("redistest: no node owns slot %d", slot)
	}
	sh := Shard{Master: c.Node(owner)}
	if sh.Master == nil {
		return Shard{}, fmt.Errorf("redistest: slot %d is on %s, which is not a node of the cluster", slot, owner)
	}
	for _, r := range slots {
		if len(r.Nodes) == 0 || r.Nodes[0].Addr != owner {
			continue
		}
		sh.Slots = append(sh.Slots, [2]int{r.Start, r.End})
		if sh.Replicas != nil {
			continue
		}
		sh.Replicas = []*Server{}
		for _, n := range r.Nodes[1:] {
			if s := c.Node(n.Addr); s != nil {
				sh.Replicas = append(sh.Replicas, s)
			}
		}
	}
	return sh, nil
}

// Owns reports whether the shard owns slot.
func (sh Shard) Owns(slot int) bool {
	for _, r := range sh.Slots {
		if r[0] <= slot && slot <= r[1] {
			return true
		}
	}
	return false
}

// Masters returns the nodes that own slots now.
func (c *Cluster) Masters(ctx context.Context) ([]*Server, error) {
	slots, err := c.slots(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Server
	for _, r := range slots {
		if s := c.Node(r.Nodes[0].Addr); s != nil && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// slots is CLUSTER SLOTS from the first node that answers.
func (c *Cluster) slots(ctx context.Context) ([]redis.ClusterSlot, error) {
	var lastErr error
	for _, s := range c.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
		slots, err := rdb.ClusterSlots(ctx).Result()
		rdb.Close()
		if err == nil {
			return slots, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("redistest: no node of %v answers CLUSTER SLOTS: %w", c.Addrs, lastErr)
}

// MoveSlot migrates slot and its keys from the master that owns it to the
// master to, while clients keep using it, the way redis-cli --cluster
// reshard does: IMPORTING on to, MIGRATING on the owner, MIGRATE of the
// keys in batches (clients meanwhile get ASK for the keys already moved),
// then SETSLOT NODE on every master, the new owner first.
func (c *Cluster) MoveSlot(ctx context.Context, slot int, to *Server) error {
	from, err := c.ShardOf(ctx, slot)
	if err != nil {
		return err
	}
	if from.Master == to {
		return fmt.Errorf("redistest: slot %d is on %s already", slot, to.Addr)
	}
	src := redis.NewClient(&redis.Options{Addr: from.Master.Addr, MaxRetries: -1})
	defer src.Close()
	dst := redis.NewClient(&redis.Options{Addr: to.Addr, MaxRetries: -1})
	defer dst.Close()
	srcID, err := src.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return err
	}
	dstID, err := dst.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return err
	}
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(); err != nil {
		return fmt.Errorf("redistest: SETSLOT IMPORTING on %s: %w", to.Addr, err)
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err(); err != nil {
		return fmt.Errorf("redistest: SETSLOT MIGRATING on %s: %w", from.Master.Addr, err)
	}
	host, port, _ := net.SplitHostPort(to.Addr)
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 10).Result()
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("redistest: MIGRATE %v to %s: %w", keys, to.Addr, err)
		}
	}
	masters, err := c.Masters(ctx)
	if err != nil {
		return err
	}
	order := []*Server{to, from.Master}
	for _, m := range masters {
		if !slices.Contains(order, m) {
			order = append(order, m)
		}
	}
	for _, m := range order {
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr, MaxRetries: -1})
		err := rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err()
		rdb.Close()
		if err != nil {
			return fmt.Errorf("redistest: SETSLOT NODE on %s: %w", m.Addr, err)
		}
	}
	return nil
}
