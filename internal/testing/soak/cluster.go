package soak

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/internal/testing/soak/model"
)

// ClusterFaults are the faults of a run with Config.Cluster, in order,
// each while readers and writers run: the slots of hot keys resharded to
// another master; a planned failover of the master that now holds them,
// which loses no acknowledged write; every connection killed on every
// node; and a master's process killed, which the cluster turns into a
// failover some seconds later, and which may lose the writes its replica
// had not received.
var ClusterFaults = []Fault{
	{Name: "MIGRATE hot slots", inject: migrateHotSlots},
	{Name: "CLUSTER FAILOVER", inject: clusterFailover, replica: true},
	{Name: "CLIENT KILL every node", inject: func(ctx context.Context, r *run, _ *history.Log) error {
		return r.eachNode(ctx, func(rdb *redis.Client) error { return killClients(ctx, rdb) })
	}},
	{Name: "SIGKILL a master", inject: killClusterMaster, replica: true},
}

// hotSlot is the cluster slot of hot key id.
func (r *run) hotSlot(ctx context.Context, id int64) (int, error) {
	slot, err := r.admin.(*redis.ClusterClient).ClusterKeySlot(ctx, model.RecordKey(id)).Result()
	return int(slot), err
}

// hotShard is the slot of hot key id and the shard that owns it now.
func (r *run) hotShard(ctx context.Context, id int64) (int, redistest.Shard, error) {
	slot, err := r.hotSlot(ctx, id)
	if err != nil {
		return 0, redistest.Shard{}, err
	}
	sh, err := r.cl.ShardOf(ctx, slot)
	return slot, sh, err
}

// migrateHotSlots moves every slot that holds a hot key and belongs to
// the master of hot key 1 to the next master, one slot after the other,
// the way redis-cli --cluster reshard does (redistest.Cluster.MoveSlot):
// for the length of each migration the slot's keys are split between
// the two masters, and clients are sent to the new one with ASK.
func migrateHotSlots(ctx context.Context, r *run, _ *history.Log) error {
	_, from, err := r.hotShard(ctx, 1)
	if err != nil {
		return err
	}
	masters, err := r.cl.Masters(ctx)
	if err != nil {
		return err
	}
	to := masters[(slices.Index(masters, from.Master)+1)%len(masters)]
	var slots []int
	for id := int64(1); id <= int64(r.cfg.Keys); id++ {
		slot, err := r.hotSlot(ctx, id)
		if err != nil {
			return err
		}
		if sh, err := r.cl.ShardOf(ctx, slot); err == nil && sh.Master == from.Master && !slices.Contains(slots, slot) {
			slots = append(slots, slot)
		}
	}
	for _, slot := range slots {
		if err := r.cl.MoveSlot(ctx, slot, to); err != nil {
			return err
		}
	}
	return nil
}

// clusterFailover promotes the replica of hot key 1's master with CLUSTER
// FAILOVER, the planned kind: the master stops its clients until the
// replica has every write, then the replica takes over and the master
// becomes its replica. It waits until every node agrees.
func clusterFailover(ctx context.Context, r *run, _ *history.Log) error {
	slot, sh, err := r.hotShard(ctx, 1)
	if err != nil {
		return err
	}
	if len(sh.Replicas) == 0 {
		return fmt.Errorf("soak: the master of slot %d, %s, has no replica to promote", slot, sh.Master.Addr)
	}
	rdb := redis.NewClient(&redis.Options{Addr: sh.Replicas[0].Addr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		return err
	}
	err = r.waitMaster(ctx, slot, sh.Master)
	return err
}

// killClusterMaster SIGKILLs the master of hot key 2, waits for the
// cluster to promote its replica, and brings the killed node back, which
// rejoins as a replica of the new master. Only that master's keys are
// out: until the promotion they cannot be reached (an outage, for the
// checker), and their writes acknowledged before the kill may be lost;
// the keys of the other masters stay held to the bound throughout.
func killClusterMaster(ctx context.Context, r *run, _ *history.Log) error {
	slot, sh, err := r.hotShard(ctx, min(2, int64(r.cfg.Keys)))
	if err != nil {
		return err
	}
	if got := slotOf(model.RecordKey(2)); got != slot {
		return fmt.Errorf("soak: slotOf(%q) = %d, CLUSTER KEYSLOT says %d", model.RecordKey(2), got, slot)
	}
	keys := func(id int64) bool { return sh.Owns(slotOf(model.RecordKey(id))) }
	from := r.now()
	sh.Master.Kill()
	err = r.waitMaster(ctx, slot, sh.Master)
	r.record(history.Window{From: from, To: r.now(), Keys: keys, Lost: true})
	if err != nil {
		return err
	}
	return sh.Master.Relaunch()
}

// slotOf is the cluster slot of a key without a hash tag, as the cluster
// specification defines it: CRC-16/XMODEM of the key, modulo 16384. The
// checker computes it for every read, hot or cold, to tell the keys of a
// killed master from the others; killClusterMaster checks it against
// CLUSTER KEYSLOT.
func slotOf(key string) int {
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^key[i]]
	}
	return int(crc) & 16383
}

// crc16Table holds CRC-16/XMODEM (polynomial 0x1021) of each byte.
var crc16Table = func() (t [256]uint16) {
	for b := range t {
		c := uint16(b) << 8
		for range 8 {
			c = c<<1 ^ 0x1021*(c>>15)
		}
		t[b] = c
	}
	return t
}()

// waitMaster waits until the cluster gives slot to a master other than
// old and every node that answers agrees.
func (r *run) waitMaster(ctx context.Context, slot int, old *redistest.Server) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r.agree(ctx, slot, old) {
			return nil
		}
		if time.Now().After(deadline) || !sleep(ctx, 20*time.Millisecond) {
			return fmt.Errorf("soak: slot %d still on %s or the nodes disagree after 20s", slot, old.Addr)
		}
	}
}

// agree reports whether every node that answers names one master of slot,
// other than old, and that master says it is one.
func (r *run) agree(ctx context.Context, slot int, old *redistest.Server) bool {
	owner := ""
	for _, n := range r.cl.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
		slots, err := rdb.ClusterSlots(ctx).Result()
		rdb.Close()
		if err != nil {
			continue // the killed node
		}
		for _, s := range slots {
			if s.Start <= slot && slot <= s.End && len(s.Nodes) > 0 {
				if owner != "" && owner != s.Nodes[0].Addr {
					return false
				}
				owner = s.Nodes[0].Addr
			}
		}
	}
	if owner == "" || owner == old.Addr {
		return false
	}
	rdb := redis.NewClient(&redis.Options{Addr: owner, MaxRetries: -1})
	defer rdb.Close()
	role, err := rdb.Do(ctx, "ROLE").Slice()
	return err == nil && len(role) > 0 && role[0] == "master"
}

// eachNode runs f on a connection to every node of the cluster.
func (r *run) eachNode(ctx context.Context, f func(*redis.Client) error) error {
	for _, n := range r.cl.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
		err := f(rdb)
		rdb.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Addr, err)
		}
	}
	return nil
}
