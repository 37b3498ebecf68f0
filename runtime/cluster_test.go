package runtime

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// TestOnACluster runs reads, writes, refresh, loading and batch reads on a
// real three-master Redis Cluster, with keys spread over every node.
func TestOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	ctx := context.Background()
	tb := newTable()
	for i := range 40 {
		tb.rows["p:"+strconv.Itoa(i)] = sample(int64(i), "row "+strconv.Itoa(i))
	}
	clk := fakeclock.New(epoch)
	c, err := New(rdb, profileGlue, withClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10),
		WithLoader(tb.load), WithRebuildLock(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// Half the rows are in Redis already, spread over the three masters.
	for i := 0; i < 40; i += 2 {
		if err := c.Set(ctx, "p:"+strconv.Itoa(i), tb.rows["p:"+strconv.Itoa(i)]); err != nil {
			t.Fatal(err)
		}
	}
	nodes := map[string]bool{}
	for i := 0; i < 40; i += 2 {
		slot := rdb.ClusterKeySlot(ctx, "p:"+strconv.Itoa(i)).Val()
		for _, s := range rdb.ClusterSlots(ctx).Val() {
			if int64(s.Start) <= slot && slot <= int64(s.End) {
				nodes[s.Nodes[0].Addr] = true
			}
		}
	}
	if len(nodes) != 3 {
		t.Fatalf("test keys live on %d nodes, want all 3", len(nodes))
	}
	// MGETs are grouped by the slot hashSlot computes: Redis must agree.
	for _, k := range []string{"p:0", "p:17", "user:{42}:x", "{}a", "a{b}{c}", "ü:ø", "{{x}}"} {
		if want := rdb.ClusterKeySlot(ctx, k).Val(); int64(track.HashSlot(k)) != want {
			t.Fatalf("track.HashSlot(%q) = %d, CLUSTER KEYSLOT says %d", k, track.HashSlot(k), want)
		}
	}

	for range 101 { // heat one key
		if _, err := c.Get(ctx, "p:0"); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"p:0", "p:404"}
	for i := 1; i < 40; i++ {
		keys = append(keys, "p:"+strconv.Itoa(i))
	}
	got, err := c.GetMany(ctx, keys)
	if err != nil {
		t.Fatalf("GetMany across slots: %v", err)
	}
	if got[1] != nil {
		t.Fatalf("absent p:404 = %+v", got[1])
	}
	for j, k := range keys {
		if k == "p:404" {
			continue
		}
		if got[j] == nil || got[j].Name != tb.rows[k].Name {
			t.Fatalf("GetMany[%d] (%s) = %+v", j, k, got[j])
		}
	}
	if n := tb.calls.Load(); n != 21 {
		t.Fatalf("loader called %d times, want 21: the 20 odd rows and p:404", n)
	}

	// A refresh pipeline spans nodes too.
	b, _ := msgpack.Marshal(sample(0, "changed"))
	rdb.Set(ctx, "p:0", b, 0)
	tickAndWait(c, clk.Advance(DefaultRefresh))
	if v, err := c.Get(ctx, "p:0"); err != nil || v.Name != "changed" {
		t.Fatalf("after refresh on a cluster: %+v, %v", v, err)
	}
	if err := c.Del(ctx, "p:0"); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "p:0"); err != nil || v.Name != "row 0" {
		t.Fatalf("Get after Del = %+v, %v; want the loader's row again", v, err)
	}
}

// Finding 9: sessions listened to the masters known when the repository
// was made, so after a slot moved to a new master, writes there were never
// seen. Here a master joins and the hot key's slot moves to it, live.
func TestTrackingFollowsASlotToANewMaster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := t.Context()
	c, err := New(cl.Client(t), profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writer := cl.Client(t) // another program
	write := func(name string) {
		t.Helper()
		b, _ := msgpack.Marshal(sample(1, name))
		if err := writer.Set(ctx, "p:1", b, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(want, when string) {
		t.Helper()
		(&env{t: t, c: c, ctx: ctx}).eventually("p:1", want, when)
	}
	write("v1")
	for range 101 {
		read("v1", "before the move")
	}
	if !holds(c.e, "p:1") {
		t.Fatal("p:1 not held locally")
	}

	added := joinCluster(t, cl)
	if err := cl.MoveSlot(ctx, int(writer.ClusterKeySlot(ctx, "p:1").Val()), added); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"v2", "v3", "v4"} {
		write(name) // lands on the new master
		read(name, "a write on the new master")
		for range 101 {
			c.Get(ctx, "p:1") // keep it hot and held
		}
	}
}

// A copy whose slot moved to another master is unverified until a reload
// from the new master finds it current; then it is served from memory
// again, under the new master's session. Confirmed with the old master
// still named as its node, it would stay unverified for good, every hot
// read going to Redis, or be vouched for by a session that no longer
// hears the key's writes. The instance reads the topology when the old
// master answers the session's EXISTS with MOVED or ASK, not on a timer
// (here it reads it once, as it starts, and then only so).
func TestACopyWhoseSlotMovedIsServedAgainOnceTheNewMasterConfirmsIt(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := t.Context()
	once := func(c *Config) { c.Test.TopologyEvery = time.Hour }
	c, err := New(cl.Client(t), profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), once)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writer := cl.Client(t)
	b, _ := msgpack.Marshal(sample(1, "v1"))
	if err := writer.Set(ctx, "p:1", b, 0).Err(); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, c: c, ctx: ctx}
	for range 101 {
		e.eventually("p:1", "v1", "before the move")
	}
	// The first copy has the topology read and its master's session
	// start; the reads after it keep a copy that session vouches for.
	waitFor(t, "p:1 served from memory before the move", func() bool {
		e.eventually("p:1", "v1", "before the move")
		return servesLocally(c.e, "p:1")
	})

	added := joinCluster(t, cl)
	if err := cl.MoveSlot(ctx, int(writer.ClusterKeySlot(ctx, "p:1").Val()), added); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the copy of p:1 to be unverified once its slot moved", func() bool { return !servesLocally(c.e, "p:1") })
	waitFor(t, "a refresh from the new master to serve p:1 from memory again", func() bool {
		c.e.Refresh()
		return servesLocally(c.e, "p:1")
	})
	e.eventually("p:1", "v1", "after the move")
}

// joinCluster starts a server and adds it to cl as a master without slots.
func joinCluster(t *testing.T, cl *redistest.Cluster) *redistest.Server {
	t.Helper()
	s, err := redistest.Launch("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	host, port, _ := net.SplitHostPort(cl.Addrs[0])
	admin := s.Client(t)
	if err := admin.ClusterMeet(t.Context(), host, port).Err(); err != nil {
		t.Fatal(err)
	}
	want := "cluster_known_nodes:" + strconv.Itoa(len(cl.Addrs)+1)
	waitFor(t, "every node to know the new one", func() bool {
		for _, addr := range append(cl.Seeds(), s.Addr) {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			info := rdb.ClusterInfo(t.Context()).Val()
			rdb.Close()
			if !strings.Contains(info, want) || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	return s
}

// A master the cluster has flagged failed keeps its slots until a replica
// takes them over. The topology reading dropped it as soon as it was
// flagged and gave its slots to its replica, which cannot serve them and
// whose breaker is closed: every cold read of its keys then waited on the
// cluster client's dials to the dead master (660 ms in the soak) instead
// of failing fast. Here the replica may not take over, so the window
// lasts.
func TestClusterKeysOfAFailedMasterFailFast(t *testing.T) {
	cl := startReplicated(t)
	ctx := t.Context()
	for _, n := range cl.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr})
		err := rdb.ConfigSet(ctx, "cluster-replica-no-failover", "yes").Err()
		if err == nil { // the other masters keep serving their slots
			err = rdb.ConfigSet(ctx, "cluster-require-full-coverage", "no").Err()
		}
		rdb.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	rdb := cl.Client(t)
	c, err := New(rdb, profileGlue, WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "p:1", sample(1, "v1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first topology reading", func() bool { c.e.Copies().Nodes.One.Want(); return c.e.Copies().Nodes.Followed() })
	if v, err := c.Get(ctx, "p:1"); err != nil || v.Name != "v1" {
		t.Fatalf("before the failure: %+v, %v", v, err)
	}
	sh, err := cl.ShardOf(ctx, int(rdb.ClusterKeySlot(ctx, "p:1").Val()))
	if err != nil {
		t.Fatal(err)
	}
	sh.Master.Kill()
	other := cl.Node(cl.Addrs[0])
	if other == sh.Master {
		other = cl.Node(cl.Addrs[1])
	}
	flagged := redis.NewClient(&redis.Options{Addr: other.Addr})
	defer flagged.Close()
	var view string
	defer func() {
		if t.Failed() {
			t.Logf("CLUSTER NODES of %s:\n%s", other.Addr, view)
		}
	}()
	waitCluster(t, "the cluster to flag "+sh.Master.Addr+" failed", func() bool {
		view = flagged.ClusterNodes(ctx).Val()
		for _, line := range strings.Split(view, "\n") {
			// id addr@cport flags …; flags such as master,fail,nofailover
			if f := strings.Fields(line); len(f) > 2 && strings.HasPrefix(f[1], sh.Master.Addr+"@") && slices.Contains(strings.Split(f[2], ","), "fail") {
				return true
			}
		}
		return false
	})
	// Long enough for several topology readings.
	for i := range 20 {
		if _, err := c.Get(ctx, "p:1"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("read %d of a key of the failed master: %v, want %v at once", i, err, ErrUnavailable)
		}
		time.Sleep(50 * time.Millisecond) // a fifth of the hub's topology pace
	}
}

// When a master dies and the cluster promotes its replica, copies made on
// the dead master were served as stale reads for as long as the dead
// master's breaker stayed open, while the key's new master answered and
// held newer writes: the soak saw reads 2.5 s older than an acknowledged
// write. An unverified copy may be served only while the node that owns
// the key now cannot be reached. And the caller's client must follow: a
// reload of its slot map that asked a node not told of the promotion yet
// left its reads on the dead master (nudge).
func TestClusterCopiesFollowAPromotedReplica(t *testing.T) {
	cl := startReplicated(t)
	ctx := t.Context()
	rdb := cl.Client(t)
	c, err := New(rdb, profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e := &env{t: t, c: c, ctx: ctx}
	promoted := promoteUnder(t, cl, rdb, e)
	b, _ := msgpack.Marshal(sample(1, "v2"))
	if err := promoted.Set(ctx, "p:1", b, 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Within the cluster's own time: the runtime's topology reading and
	// the client's slot map both follow what the nodes gossip.
	waitCluster(t, "p:1 to read v2, written on the promoted replica", func() bool {
		v, err := c.Get(ctx, "p:1")
		return err == nil && v.Name == "v2"
	})
}

// promoteUnder holds p:1 as v1 in e's Cache over rdb, kills the master of
// its slot for good, waits for the cluster to promote its replica, and
// returns a client of the promoted replica.
func promoteUnder(t *testing.T, cl *redistest.Cluster, rdb *redis.ClusterClient, e *env) *redis.Client {
	t.Helper()
	ctx, c := e.ctx, e.c
	if err := c.Set(ctx, "p:1", sample(1, "v1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first topology reading", func() bool { c.e.Copies().Nodes.One.Want(); return c.e.Copies().Nodes.Followed() })
	for range 101 {
		e.eventually("p:1", "v1", "before the failure")
	}
	if !holds(c.e, "p:1") {
		t.Fatal("p:1 not held locally")
	}
	slot := int(rdb.ClusterKeySlot(ctx, "p:1").Val())
	sh, err := cl.ShardOf(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	sh.Master.Kill() // and it stays dead
	var promoted *redis.Client
	waitCluster(t, "the replica of "+sh.Master.Addr+" to be promoted", func() bool {
		now, err := cl.ShardOf(ctx, slot)
		if err != nil || now.Master == sh.Master {
			return false
		}
		promoted = redis.NewClient(&redis.Options{Addr: now.Master.Addr})
		return true
	})
	t.Cleanup(func() { promoted.Close() })
	return promoted
}

// startReplicated starts three masters with a replica each for t.
func startReplicated(t *testing.T) *redistest.Cluster {
	t.Helper()
	cl, err := redistest.LaunchCluster(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl
}

// waitCluster is waitFor for what the cluster decides on its own: it
// flags a node failed after the node timeout (2 s) and the gossip of a
// majority, and promotes a replica a second later, longer on a loaded
// machine.
func waitCluster(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 30*time.Second, what, cond)
}

// An instance that learns of a promotion later than the others went on
// serving its copy of a dead master's key as a stale read while the others
// wrote to the promoted replica: in the soak, one instance's reads up to
// 480 ms older than an acknowledged write, just after the promotion. Here
// the instance never reads the topology again; it hears the write from the
// promoted replica's session, and must not return the value it replaced.
func TestAnInstanceLateToAPromotionServesNoOverwrittenCopy(t *testing.T) {
	cl := startReplicated(t)
	ctx := t.Context()
	rdb := cl.Client(t)
	// The instance reads the topology once, and starts a session on
	// every node, replicas included.
	late := func(c *Config) { c.Test.TopologyEvery = time.Hour }
	c, err := New(rdb, profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), late)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e := &env{t: t, c: c, ctx: ctx}
	promoted := promoteUnder(t, cl, rdb, e)
	// The copy is served while its master is down: a refused dial of the
	// watcher finds it silent (with this test's clock standing still
	// nothing else does). A read that comes while the breaker is open on
	// other evidence (a line that failed twice, a dial timed out) waits
	// for that dial (TestAHotReadWhoseDialIsRefusedIsServedItsCopy; it
	// failed fast once in a clean-clone CI run at 3105ab3, and this check
	// retried for 10 s until issue 50).
	for range 20 {
		if v, err := c.Get(ctx, "p:1"); err != nil || v.Name != "v1" {
			t.Fatalf("a hot read while p:1's master is down, before any write: %+v, %v; want its copy, v1", v, err)
		}
	}

	b, _ := msgpack.Marshal(sample(1, "v2"))
	if err := promoted.Set(ctx, "p:1", b, 0).Err(); err != nil {
		t.Fatal(err)
	}
	acked := time.Now()
	seen := map[string]int{} // what reads beginning settle after the write returned
	for time.Since(acked) < settle+300*time.Millisecond {
		time.Sleep(time.Millisecond)
		began := time.Since(acked)
		v, err := c.Get(ctx, "p:1")
		if began < settle {
			continue
		}
		if err != nil {
			seen["an error"]++
		} else {
			seen[v.Name]++
		}
	}
	if seen["v1"] > 0 {
		t.Fatalf("reads beginning %v after v2 was written on the promoted replica: %v; want no v1", settle, seen)
	}
	t.Logf("reads after the write: %v", seen)
}

// On a cluster too a write of a key no instance holds costs the nodes
// nothing for the instances, however many hold other keys of its master:
// the sessions of the master and of its replica track only the keys of
// the copies kept. A write of a held key reaches each holder from the
// master and from the replica that would take its place, once each.
func TestAWriteOfAKeyNobodyHoldsSendsTheClusterInstancesNothing(t *testing.T) {
	cl := startReplicated(t)
	ctx := t.Context()
	var es []*env
	for range 8 {
		c, err := New(cl.Client(t), profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		es = append(es, &env{t: t, c: c, ctx: ctx})
	}
	if err := es[0].c.Set(ctx, "p:1", sample(1, "v1")); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		waitFor(t, "p:1 served from memory", func() bool {
			e.eventually("p:1", "v1", "before the writes")
			return servesLocally(e.c.e, "p:1")
		})
	}
	sh, err := cl.ShardOf(ctx, int(track.HashSlot("p:1")))
	if err != nil {
		t.Fatal(err)
	}
	unheld := "" // a key of the same master
	for i := 2; unheld == ""; i++ {
		if k := "p:" + strconv.Itoa(i); sh.Owns(int(track.HashSlot(k))) {
			unheld = k
		}
	}
	master, replica := sh.Master.Client(t), sh.Replicas[0].Client(t)
	waitFor(t, "the replica to track p:1", func() bool { return infoStat(t, replica, "stats", "tracking_total_keys") == 1 })
	out := func() int {
		return infoStat(t, master, "stats", "total_net_output_bytes") + infoStat(t, replica, "stats", "total_net_output_bytes")
	}
	const writes = 5000
	before := out()
	pipe := master.Pipeline()
	for i := range writes {
		pipe.Set(ctx, unheld, i, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// Each SET is answered +OK (5 bytes) and sent to the replica (about
	// 33); the slack is the count's own INFO and the sessions' PINGs.
	per := float64(out()-before) / writes
	t.Logf("%.1f bytes out per write", per)
	if per > 5+45+3 {
		t.Fatalf("the master and its replica sent %.1f bytes per write of a key no instance holds, want the writer's 5 and the replica's stream (45 at most, +3 slack)", per)
	}

	counts := make([]uint64, len(es))
	for i, e := range es {
		counts[i] = e.c.Stats().Invalidations
	}
	b, _ := msgpack.Marshal(sample(1, "v2"))
	if err := master.Set(ctx, "p:1", b, 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i, e := range es {
		dropped(t, e, "p:1")
		waitFor(t, "the replica's invalidation", func() bool { return e.c.Stats().Invalidations-counts[i] >= 2 })
		if got := e.c.Stats().Invalidations - counts[i]; got != 2 {
			t.Errorf("instance %d handled %d invalidations of one write of the key it holds, want 2: the master's and the replica's", i, got)
		}
	}
}

// An instance holding a copy of one key on a cluster vouches for it on
// the key's master alone: the sessions of the other masters, and of the
// replicas, which track the master's keys for a promotion, send no PING.
// Counted at each node over the time the key's master takes 25 PINGs of
// the session, less those of the breakers' watchers (which ping a node
// only while it is in doubt); a replica also executes its master's
// replication PING, one every 10 s.
func TestAClusterInstanceVouchesOnlyOnTheMastersOfItsCopies(t *testing.T) {
	cl := startReplicated(t)
	ctx := t.Context()
	watcher := new(atomic.Int64)
	counted := func(c *Config) {
		c.Test.ProbeLine = func(l breaker.Line) breaker.Line { return countingLine{l, watcher} }
	}
	c, err := New(cl.Client(t), profileGlue, withClock(fakeclock.New(epoch)), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), counted)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, ctx: ctx}
	if err := c.Set(ctx, "p:1", sample(1, "v1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "p:1 served from memory", func() bool {
		e.eventually("p:1", "v1", "held")
		return servesLocally(c.e, "p:1")
	})
	sh, err := cl.ShardOf(ctx, int(track.HashSlot("p:1")))
	if err != nil {
		t.Fatal(err)
	}
	masters, err := cl.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pings := func(s *redistest.Server) int { return redistest.CommandStat(t, s.Client(t), "ping", "calls") }
	others := map[*redistest.Server]int{}
	for _, n := range cl.Nodes {
		if n != sh.Master {
			others[n] = pings(n)
		}
	}
	before, watched := pings(sh.Master), watcher.Load()
	waitFor(t, "25 PINGs at the master of p:1", func() bool { return pings(sh.Master)-before >= 25 })
	spare := watcher.Load() - watched
	for n, at := range others {
		got := pings(n) - at
		if !slices.Contains(masters, n) {
			got-- // its master's replication PING, perhaps
		}
		if int64(got) > spare {
			t.Errorf("%s took %d PINGs while p:1's master took 25 (the watchers sent %d); want none of the instance's", n.Addr, got, spare)
		}
	}
}
