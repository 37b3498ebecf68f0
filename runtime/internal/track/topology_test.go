package track

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// ShardMaster decides which node of a CLUSTER SHARDS entry owns its slots,
// as the cluster reports a failure and then a failover.
func TestShardMaster(t *testing.T) {
	node := func(role, health string) redis.Node { return redis.Node{Role: role, Health: health} }
	slots := []redis.SlotRange{{Start: 0, End: 5460}}
	for _, tc := range []struct {
		name  string
		shard redis.ClusterShard
		want  int
	}{
		{"the master online owns the slots, whatever its replica reports",
			redis.ClusterShard{Slots: slots, Nodes: []redis.Node{node("replica", "loading"), node("master", "online")}}, 1},
		{"a failed master keeps its slots until its replica is promoted",
			redis.ClusterShard{Slots: slots, Nodes: []redis.Node{node("replica", "online"), node("master", "fail")}}, 1},
		{"once promoted, the master online owns them, even listed after the failed one",
			redis.ClusterShard{Slots: slots, Nodes: []redis.Node{node("master", "fail"), node("master", "online")}}, 1},
		{"a new master owns no slots yet, and is still the shard's master",
			redis.ClusterShard{Nodes: []redis.Node{node("master", "online")}}, 0},
		{"a failed master of no slots, after its failover, owns nothing",
			redis.ClusterShard{Nodes: []redis.Node{node("master", "fail")}}, -1},
	} {
		if got := ShardMaster(tc.shard); got != tc.want {
			t.Errorf("%s: ShardMaster = %d, want %d", tc.name, got, tc.want)
		}
	}
}
