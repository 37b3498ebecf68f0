package runtime

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestGetManyMixesHotColdAndMissing(t *testing.T) {
	e := newEnv(t)
	e.put("p:hot", sample(1, "hot"))
	e.put("p:cold", sample(2, "cold"))
	e.heat("p:hot")
	e.put("p:hot", sample(1, "changed in Redis")) // proves the hot one is served locally
	hook := &cmdCounter{}
	e.c.e.Client().AddHook(hook)

	got, err := e.c.GetMany(e.ctx, []string{"p:cold", "p:missing", "p:hot", "p:cold"})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(got))
	for i, v := range got {
		if v != nil {
			names[i] = v.Name
		}
	}
	if want := []string{"cold", "", "hot", "cold"}; !slices.Equal(names, want) {
		t.Fatalf("GetMany = %q, want %q", names, want)
	}
	if got[0] == got[3] {
		t.Fatal("a key asked for twice returned one shared value")
	}
	if hook.get("mget") != 1 || hook.get("get") != 0 {
		t.Fatalf("%d MGETs and %d GETs, want one MGET", hook.get("mget"), hook.get("get"))
	}
}

func TestGetManyChunksMGET(t *testing.T) {
	e := newEnv(t)
	keys := make([]string, 1200)
	pipe := e.raw.Pipeline()
	for i := range keys {
		keys[i] = "p:" + strconv.Itoa(i)
		if i%2 == 0 {
			b, _ := msgpack.Marshal(sample(int64(i), "x"))
			pipe.Set(e.ctx, keys[i], b, 0)
		}
	}
	pipe.Exec(e.ctx)
	hook := &cmdCounter{}
	e.c.e.Client().AddHook(hook)
	got, err := e.c.GetMany(e.ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if (i%2 == 0) != (v != nil) || (v != nil && v.ID != int64(i)) {
			t.Fatalf("value %d = %+v", i, v)
		}
	}
	if n := hook.get("mget"); n != 3 {
		t.Fatalf("1200 keys took %d MGETs, want 3 chunks of at most 500", n)
	}
}

func TestGetManyPrefersTheBatchLoader(t *testing.T) {
	tb := newTable(sample(1, "ada"), sample(2, "bob"))
	var batches atomic.Int32
	batch := func(ctx context.Context, ks []string) (map[string]*profile, error) {
		batches.Add(1)
		out := map[string]*profile{}
		for _, k := range ks {
			if v, err := tb.load(ctx, k); err == nil {
				out[k] = v
			}
		}
		return out, nil
	}
	e := newEnv(t, WithLoader(tb.load), WithBatchLoader(batch))
	got, err := e.c.GetMany(e.ctx, []string{"p:1", "p:2", "p:3"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "ada" || got[1].Name != "bob" || got[2] != nil {
		t.Fatalf("GetMany = %+v", got)
	}
	if batches.Load() != 1 {
		t.Fatalf("batch loader called %d times, want 1", batches.Load())
	}
	// Written back: the next batch reads Redis only, placeholder included.
	if _, err := e.c.GetMany(e.ctx, []string{"p:1", "p:2", "p:3"}); err != nil || batches.Load() != 1 {
		t.Fatalf("second batch reached the loader (%d batches, %v)", batches.Load(), err)
	}
}

func TestGetManyFallsBackToTheLoader(t *testing.T) {
	tb := newTable(sample(1, "ada"))
	e := newEnv(t, WithLoader(tb.load))
	got, err := e.c.GetMany(e.ctx, []string{"p:1", "p:9"})
	if err != nil || got[0] == nil || got[0].Name != "ada" || got[1] != nil {
		t.Fatalf("GetMany = %+v, %v", got, err)
	}
	if n := tb.calls.Load(); n != 2 {
		t.Fatalf("loader called %d times, want once per missing key", n)
	}
}
