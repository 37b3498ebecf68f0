package runtime

import (
	"cmp"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// breakBloom makes every addition to e's Bloom filter (of 1000 ids at
// 1%, entity profile) fail: its one shard is a list.
func breakBloom(t *testing.T, e *env) {
	t.Helper()
	m, k := bloom.Size(1000, 0.01)
	shard := "hotkeygen:bloom:{profile:" + strconv.FormatUint(m, 10) + "x" + strconv.Itoa(k) + ":0}"
	if err := e.raw.LPush(e.ctx, shard, "not bits").Err(); err != nil {
		t.Fatal(err)
	}
}

// A row's write adds its key to the Bloom filter in the same round trip.
// When the addition fails, a write through the repository lands but
// fails (the id could read as absent later), and a loader's write-back
// lands and says so in the log, the read returning its row.
func TestAWritesBloomAdditionThatFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(e *env) error
		err   string // part of the caller's error; "" for none
		log   string // part of a line logged
	}{
		{"Set", func(e *env) error { return e.c.Set(e.ctx, "p:1", sample(1, "v1")) }, "add to the Bloom filter: WRONGTYPE", ""},
		{"a loader's write-back", func(e *env) error { _, err := e.c.Get(e.ctx, "p:1"); return err }, "", "adding a loaded id to the Bloom filter failed"},
		{"a batch loader's write-back", func(e *env) error { _, err := e.c.GetMany(e.ctx, []string{"p:1"}); return err }, "", "adding a loaded id to the Bloom filter failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			load := func(context.Context, string) (*profile, error) { return sample(1, "v1"), nil }
			many := func(_ context.Context, ks []string) (map[string]*profile, error) {
				return map[string]*profile{ks[0]: sample(1, "v1")}, nil
			}
			e := newEnv(t, WithBloom(true), WithBloomItems(1000), WithBloomFP(0.01), WithLoader(load), WithBatchLoader(many),
				WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			breakBloom(t, e) // a check that fails lets the read through
			err := tc.write(e)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("%s = %v, want an error with %q", tc.name, err, tc.err)
			}
			if got := e.raw.Exists(e.ctx, "p:1").Val(); got != 1 {
				t.Fatalf("%s did not land", tc.name)
			}
			if tc.log != "" && len(logs.linesWith(tc.log)) == 0 {
				t.Fatalf("logged %q, want a line with %q", logs.String(), tc.log)
			}
		})
	}
}

// Bytes that do not decode are deleted before the loader's row is
// written back in their place, and the deletion is logged.
func TestBytesThatDoNotDecodeAreReplacedByTheLoadersRow(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, WithLoader(func(context.Context, string) (*profile, error) { return sample(1, "loaded"), nil }),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := e.raw.Set(e.ctx, "p:1", "\xc1 not msgpack", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := e.get("p:1"); got.Name != "loaded" {
		t.Fatalf("read %q, want the loader's row", got.Name)
	}
	if len(logs.linesWith("deleting a value that does not decode")) != 1 {
		t.Fatalf("logged %q, want the deletion said once", logs.String())
	}
	b, err := e.raw.Get(e.ctx, "p:1").Bytes()
	var stored profile
	if err == nil {
		err = msgpack.Unmarshal(b, &stored)
	}
	if err != nil || stored.Name != "loaded" {
		t.Fatalf("Redis holds %q (%v) after the read, want the loader's row", b, err)
	}
}

// Issue 50, item 3: during a rolling deploy that changes version=, the
// builds of versions 1 and 2 share Redis, each on keys of its own. A
// write by either, after the database update it follows (a set of the new
// row, or a delete), deletes the row under the neighbouring version in
// the same round trip, so the other build's readers, its hot key's copy
// included, read the new row from their loader, the source of truth.
// Before, each went on serving its own version's old row until the TTL.
// Reads that begin settle after the write was acknowledged are judged;
// how soon the first new read came is logged.
func TestAWriteReachesTheBuildOfTheNeighbouringVersion(t *testing.T) {
	v2Glue := Glue[string, profile]{Key: func(k string) string { return "p:v2:" + strings.TrimPrefix(k, "p:") },
		Clone: cloneProfile, Prefix: "p:v2:", Version: 2}
	for _, tc := range []struct {
		name   string
		writer int // the build that writes: 1 or 2
		del    bool
		mode   string // invalidate=, tracking when empty
		// cluster: on a cluster, where the neighbours' keys are in other
		// slots, their DELs sent to their own nodes in the same round trip.
		cluster bool
	}{
		{name: "version 2 sets, version 1 reads", writer: 2},
		{name: "version 2 deletes, version 1 reads", writer: 2, del: true},
		{name: "version 1 sets, version 2 reads", writer: 1},
		{name: "version 1 deletes, version 2 reads", writer: 1, del: true},
		// With pubsub the writer announces the neighbours' rows on their
		// versions' channels: Redis tells nobody.
		{name: "pubsub: version 2 sets, version 1 reads", writer: 2, mode: InvalidatePubSub},
		{name: "pubsub: version 1 deletes, version 2 reads", writer: 1, del: true, mode: InvalidatePubSub},
		{name: "cluster: version 2 sets, version 1 reads", writer: 2, cluster: true},
		{name: "cluster: version 1 deletes, version 2 reads", writer: 1, del: true, cluster: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var client func() redis.UniversalClient
			if tc.cluster {
				cl := redistest.StartCluster(t, 3)
				if track.HashSlot("p:1") == track.HashSlot("p:v2:1") {
					t.Fatal("the two versions' keys share a slot: the case needs them apart")
				}
				client = func() redis.UniversalClient { return cl.Client(t) }
			} else {
				srv := redistest.Start(t)
				client = func() redis.UniversalClient { return srv.Client(t) }
			}
			db := newTable(sample(1, "old"))
			mode := cmp.Or(tc.mode, InvalidateTracking)
			opts := []Option{WithEntity("profile"), withClock(config.Wall{}), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10),
				WithInvalidate(mode), WithLoader(db.load)}
			v1, err := New(client(), profileGlue, opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { v1.Close() })
			v2, err := New(client(), v2Glue, opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { v2.Close() })
			builds := map[int]*Cache[string, profile]{1: v1, 2: v2}
			writer, reader := builds[tc.writer], builds[3-tc.writer]
			ctx := t.Context()
			// Both builds have the old row in Redis, and the reader a hot
			// copy of it.
			for _, c := range builds {
				if v, err := c.Get(ctx, "p:1"); err != nil || v.Name != "old" {
					t.Fatalf("Get = %+v, %v", v, err)
				}
			}
			waitFor(t, "the reader's copy served locally", func() bool {
				reader.Get(ctx, "p:1")
				return servesLocally(reader.e, "p:1")
			})

			db.mu.Lock()
			db.rows["p:1"] = sample(1, "new") // the database's update
			db.mu.Unlock()
			if tc.del {
				err = writer.Del(ctx, "p:1")
			} else {
				err = writer.Set(ctx, "p:1", sample(1, "new"))
			}
			if err != nil {
				t.Fatal(err)
			}
			first := readsAfterAWrite(t, func() (bool, any, error) {
				v, err := reader.Get(ctx, "p:1")
				return err == nil && v.Name == "new", v, err
			})
			t.Logf("the other build read the new row %v after the write was acknowledged", first)
		})
	}
}
