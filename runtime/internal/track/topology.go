package track

import (
	"context"
	"net"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Shard is one master's slots and the addresses of its nodes, the
// master's first.
type Shard struct {
	Slots [][2]int
	Addrs []string
}

// ShardMaster returns the index of the node of cs that owns its slots:
// the master online, or else, while the cluster has not promoted a
// replica yet, the one that failed. A master that fails keeps its slots
// until then: its keys stay on it, whose breaker makes their reads fail
// fast, and not on a replica that cannot serve them yet and whose breaker
// is closed. -1 when there is none (a failed master of no slots, alone).
func ShardMaster(cs redis.ClusterShard) int {
	master := -1
	for i, n := range cs.Nodes {
		if n.Role != "master" || n.Health != "online" && len(cs.Slots) == 0 {
			continue
		}
		if master < 0 || n.Health == "online" && cs.Nodes[master].Health != "online" {
			master = i
		}
	}
	return master
}

// Source is what the topology is read from: the caller's cluster
// client, or one node's.
type Source interface {
	ClusterShards(ctx context.Context) *redis.ClusterShardsCmd
	ClusterSlots(ctx context.Context) *redis.ClusterSlotsCmd
}

// ReadShards reads the topology: CLUSTER SHARDS (Redis 7), which lists
// masters that own no slot yet, or CLUSTER SLOTS before it.
func ReadShards(ctx context.Context, r Source) ([]Shard, error) {
	if shards, err := r.ClusterShards(ctx).Result(); err == nil {
		out := make([]Shard, 0, len(shards))
		for _, cs := range shards {
			var sh Shard
			master := ShardMaster(cs)
			for i, n := range cs.Nodes {
				addr := net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
				switch {
				case i == master:
					sh.Addrs = append([]string{addr}, sh.Addrs...)
				case n.Health == "fail":
					// Dead: listed until it comes back or is forgotten.
				default:
					// Redis 7.0 reports a replica "loading" whenever
					// its replication offset lags: a session all the
					// same, or replicas' sessions come and go.
					sh.Addrs = append(sh.Addrs, addr)
				}
			}
			if master < 0 {
				out = append(out, sh) // sessions only: a shard without a master serves nothing
				continue
			}
			for _, sr := range cs.Slots {
				sh.Slots = append(sh.Slots, [2]int{int(sr.Start), int(sr.End)})
			}
			out = append(out, sh)
		}
		return out, nil
	}
	slots, err := r.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Shard, 0, len(slots))
	for _, s := range slots {
		sh := Shard{Slots: [][2]int{{s.Start, s.End}}}
		for _, n := range s.Nodes {
			sh.Addrs = append(sh.Addrs, n.Addr)
		}
		out = append(out, sh)
	}
	return out, nil
}
