package soak

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime"
)

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// TestPromisesHoldUnderFaults runs three instances through every fault
// in each invalidation mode with paced readers: no read is staler than
// the bound or older than its instance's own write, hot reads are served
// through the outage, and cold reads fail fast and recover.
func TestPromisesHoldUnderFaults(t *testing.T) {
	redis.SetLogger(discard{})
	var results []*Result
	for _, mode := range []string{runtime.InvalidateTracking, runtime.InvalidatePubSub, runtime.InvalidatePubSubKeys, runtime.InvalidateOff} {
		t.Run(mode, func(t *testing.T) {
			res, err := Run(t.Context(), Config{Mode: mode, Duration: 14 * time.Second, Instances: 3, Keys: 8, Faults: Faults})
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, res)
			checkThroughOutage(t, res)
		})
	}
	Table(os.Stdout, results)
	OutageTable(os.Stdout, results)
}

// TestPromisesHoldForCollections runs the same checks, with invalidation
// tracking, over collections in a Redis hash: a hot owner's whole
// collection held locally, each write an HSET (the write script, or a
// plain HSET by another program).
func TestPromisesHoldForCollections(t *testing.T) {
	redis.SetLogger(discard{})
	res, err := Run(t.Context(), Config{Mode: runtime.InvalidateTracking, Duration: 14 * time.Second, Instances: 3, Keys: 8, Faults: Faults, Hash: true})
	if err != nil {
		t.Fatal(err)
	}
	Table(os.Stdout, []*Result{res})
	checkThroughOutage(t, res)
}

// TestPromisesHoldWithADatabase runs the same checks over records backed
// by a database (Config.Database): every write updates it and then deletes
// or sets the key (through a repository, or with another program's DEL),
// loads read it slowly, a tenth of them for 150 ms, so that the
// cache-aside race is run again and again through every fault. A read
// beyond the bound here is an old row a load wrote back after the delete
// or set that followed its update, or a copy kept past them.
func TestPromisesHoldWithADatabase(t *testing.T) {
	redis.SetLogger(discard{})
	for _, mode := range []string{runtime.InvalidateTracking, runtime.InvalidatePubSubKeys} {
		t.Run(mode, func(t *testing.T) {
			res, err := Run(t.Context(), Config{Mode: mode, Duration: MinDuration(Faults) + 2*time.Second, Instances: 3, Keys: 8, Faults: Faults, Database: true})
			if err != nil {
				t.Fatal(err)
			}
			Table(os.Stdout, []*Result{res})
			checkThroughOutage(t, res)
		})
	}
}

// TestCorePromises is the matrix's run (make matrix, one server at a
// time by HOTKEYGEN_SERVER): the checks above, each as short as its faults
// allow, with tracking and with Pub/Sub through every fault kind, over
// collections, and over a cluster's topology changes. make test runs the
// longer tests above on the default server, and skips this one there.
func TestCorePromises(t *testing.T) {
	redis.SetLogger(discard{})
	for _, cfg := range []Config{
		{Mode: runtime.InvalidateTracking, Faults: Faults},
		{Mode: runtime.InvalidatePubSub, Faults: Faults},
		{Mode: runtime.InvalidatePubSubKeys, Faults: Faults},
		{Mode: runtime.InvalidateTracking, Faults: Faults, Hash: true},
		{Mode: runtime.InvalidateTracking, Faults: Faults, Database: true},
	} {
		name := cfg.Mode
		if cfg.Hash {
			name += "/collections"
		}
		if cfg.Database {
			name += "/database"
		}
		t.Run(name, func(t *testing.T) {
			cfg.Duration, cfg.Instances, cfg.Keys = MinDuration(cfg.Faults)+2*time.Second, 3, 8
			res, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			Table(os.Stdout, []*Result{res})
			checkThroughOutage(t, res)
		})
	}
	t.Run("cluster", TestPromisesHoldThroughClusterChanges)
}

// checkThroughOutage is checkFresh for a run of Faults, whose outages (a
// kill, a sleep, a pause) are judged as Problems says: 99% of their hot
// reads were served, and every instance read a cold key again after Redis
// came back from each (how soon is make soak's to judge: TooSlow).
func checkThroughOutage(t *testing.T, res *Result) {
	t.Helper()
	tot := res.Total
	checkFresh(t, res)
	if tot.OutageHotReads == 0 {
		t.Error("no hot read during the outage")
	}
	for _, p := range Problems(&tot) {
		t.Error(p)
	}
}

// TestPromisesHoldThroughQuietFailures runs three instances through each
// of QuietFaults, with invalidation tracking and with Pub/Sub, paced
// readers, and judges each phase alone (Phase.Problems): no read stale
// beyond the bound or past a key's TTL plus the bound (a cut-off
// instance's are counted apart), none older than its instance's own
// write; where Redis failed, 99% of hot reads served, and every instance
// reading cold keys again once Redis answers; writes acknowledged after
// each fault.
func TestPromisesHoldThroughQuietFailures(t *testing.T) {
	redis.SetLogger(discard{})
	for _, mode := range []string{runtime.InvalidateTracking, runtime.InvalidatePubSub} {
		t.Run(mode, func(t *testing.T) {
			res, err := Run(t.Context(), Config{Mode: mode, Duration: MinDuration(QuietFaults) + 5*time.Second, Instances: 3, Keys: 8, Faults: QuietFaults})
			if err != nil {
				t.Fatal(err)
			}
			Table(os.Stdout, []*Result{res})
			OutageTable(os.Stdout, []*Result{res})
			checkPhases(t, res, len(QuietFaults))
		})
	}
}

// TestPromisesHoldThroughFailover runs the same checks while FAILOVER
// switches a master and its replica, and back, the clients following an
// endpoint moved to the new master.
func TestPromisesHoldThroughFailover(t *testing.T) {
	redis.SetLogger(discard{})
	res, err := Run(t.Context(), Config{Mode: runtime.InvalidateTracking, Duration: MinDuration(ReplicaFaults) + 2*time.Second, Instances: 3, Keys: 8, Faults: ReplicaFaults, Replica: true})
	if err != nil {
		t.Fatal(err)
	}
	Table(os.Stdout, []*Result{res})
	checkPhases(t, res, len(ReplicaFaults))
}

// checkPhases judges each of the n phases of res alone (Phase.Problems),
// each of which must have had writes to tell: a hundred at least. The
// writers aim at 600 a second, of which a phase on two cores loaded by
// another make test made 180 (a phase of three writes once passed
// unnoticed: the floor is against that, not a measure of speed).
func checkPhases(t *testing.T, res *Result, n int) {
	t.Helper()
	if len(res.Phases) != n {
		t.Fatalf("%d faults injected, want %d", len(res.Phases), n)
	}
	for _, p := range res.Phases {
		t.Run(p.Fault.Name, func(t *testing.T) {
			for _, problem := range p.Problems() {
				t.Error(problem)
			}
			if p.Report.Reads < 1000 || p.Report.Writes < 100 {
				t.Errorf("only %d reads and %d writes in the phase", p.Report.Reads, p.Report.Writes)
			}
		})
	}
}

// TestPromisesHoldThroughSentinelFailovers runs the same checks over
// Sentinel failover clients while the Sentinel switches the master over
// and back and connections are killed on the new master: failovers the
// clients and the invalidation sessions must follow on their own. The
// master's process killed is left to make soak: the Sentinel takes
// seconds to promote a replica, and the writes lost with the master need
// a longer run to be told apart.
func TestPromisesHoldThroughSentinelFailovers(t *testing.T) {
	redis.SetLogger(discard{})
	faults := SentinelFaults[:3]
	res, err := Run(t.Context(), Config{Mode: runtime.InvalidateTracking, Duration: MinDuration(faults) + 4*time.Second, Instances: 3, Keys: 8, Faults: faults, Sentinel: true})
	if err != nil {
		t.Fatal(err)
	}
	Table(os.Stdout, []*Result{res})
	checkFresh(t, res)
	checkPhases(t, res, len(faults))
}

// TestPromisesHoldThroughClusterChanges runs the same checks over cluster
// clients on three masters with a replica each while the slots of hot
// keys are resharded to another master, the master that now holds them
// fails over to its replica, and every node's connections are killed:
// topology changes the cluster clients and the sessions of every node
// must follow. After each fault, writes are acknowledged again. A master's
// process killed, the last of ClusterFaults, is left to make soak: the
// cluster takes seconds to flag it and promote its replica.
func TestPromisesHoldThroughClusterChanges(t *testing.T) {
	redis.SetLogger(discard{})
	faults := ClusterFaults[:len(ClusterFaults)-1]
	res, err := Run(t.Context(), Config{Mode: runtime.InvalidateTracking, Duration: 15 * time.Second, Instances: 3, Keys: 8, Faults: faults, Cluster: true})
	if err != nil {
		t.Fatal(err)
	}
	Table(os.Stdout, []*Result{res})
	checkFresh(t, res)
	checkPhases(t, res, len(faults))
}

// checkFresh fails t unless the run ran and no read was stale beyond the
// bound or older than its instance's own write.
func checkFresh(t *testing.T, res *Result) {
	t.Helper()
	tot := res.Total
	if len(tot.BeyondBound) > 0 || len(tot.OwnWrites) > 0 {
		t.Errorf("%d reads stale beyond the bound, %d older than their own write, of %d:\n%s%s",
			len(tot.BeyondBound), len(tot.OwnWrites), tot.Reads, tot.Summary(10), res.Trail)
	}
	if tot.Reads < 10_000 || tot.Writes < 500 {
		t.Errorf("only %d reads and %d writes: the run did not run", tot.Reads, tot.Writes)
	}
}
