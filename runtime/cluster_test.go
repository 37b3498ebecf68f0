package runtime

import (
	"context"
	"strconv"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/redistest"
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
	c, err := New(rdb, profileGlue, WithClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10),
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
		if want := rdb.ClusterKeySlot(ctx, k).Val(); int64(hashSlot(k)) != want {
			t.Fatalf("hashSlot(%q) = %d, CLUSTER KEYSLOT says %d", k, hashSlot(k), want)
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
	c.tick(clk.Advance(DefaultRefresh))
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
