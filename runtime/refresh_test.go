package runtime

import (
	"context"
	"strconv"
	"testing"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
)

// forceHot makes keys hot at once and loads their local copies with one
// GetMany, as many reads would.
func forceHot[V any](t testing.TB, c *Cache[string, V], keys []string) {
	t.Helper()
	d := c.e.Detector()
	view := make([]detect.KeyRate[string], len(keys))
	for i, k := range keys {
		view[i] = detect.KeyRate[string]{Key: k, Name: k}
	}
	d.Mu.Lock()
	d.ApplyLocked(detect.Decision[string]{Promote: keys}, view)
	d.Mu.Unlock()
	if _, err := c.GetMany(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.RegistrySize != len(keys) {
		t.Fatalf("%d keys registered for refresh, want %d", st.RegistrySize, len(keys))
	}
}

// Refreshing 1,200 hot keys costs one pipeline of three MGETs, not 1,200
// round trips, and picks up every change.
func TestRefreshBatchesKeysInMGETs(t *testing.T) {
	const n = 1200
	e := newEnv(t, WithTopN(n), WithLocalSize(2*n))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "p:" + strconv.Itoa(i)
		e.put(keys[i], sample(int64(i), "old"))
	}
	forceHot(t, e.c, keys)
	for i := 0; i < n; i += 100 {
		e.put(keys[i], sample(int64(i), "new"))
	}
	var h cmdCounter
	e.c.e.Client().AddHook(&h)
	e.c.e.Refresh()
	if pipes, cmds := h.snapshot(); pipes != 1 || cmds["mget"] != 3 || len(cmds) != 1 {
		t.Fatalf("refresh sent %d pipelines with %v; want one pipeline of 3 MGETs", pipes, cmds)
	}
	for i, k := range keys {
		want := "old"
		if i%100 == 0 {
			want = "new"
		}
		if got := e.get(k); got.Name != want {
			t.Fatalf("%s after refresh = %q, want %q", k, got.Name, want)
		}
	}
	if _, cmds := h.snapshot(); len(cmds) != 0 {
		t.Fatalf("reads after refresh went to Redis: %v", cmds)
	}
}

// A refresh that reads the bytes it stored last keeps the local copy
// instead of decoding it again; any other store in between (here a read
// after the copy expired) makes the next refresh decode, so a value that
// changed and changed back is never missed.
func TestRefreshKeepsUnchangedCopies(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	held := func() *profile {
		cp, _ := e.c.e.Copies().Local.Get("p:1")
		return cp.Val
	}
	e.c.e.Refresh() // the copy came from a read: decoded and stored again
	first := held()
	e.c.e.Refresh()
	if held() != first {
		t.Fatal("a refresh of unchanged bytes replaced the local copy")
	}
	if st := e.c.Stats(); st.Refreshes != 2 || st.RefreshErrors != 0 {
		t.Fatalf("Refreshes %d RefreshErrors %d, want 2 and 0", st.Refreshes, st.RefreshErrors)
	}

	e.put("p:1", sample(1, "bob"))     // changed unseen (invalidation is off)
	e.c.e.Copies().Local.Delete("p:1") // the copy expires
	if got := e.get("p:1"); got.Name != "bob" {
		t.Fatalf("read after expiry = %q", got.Name)
	}
	e.put("p:1", sample(1, "ada")) // and back to the bytes refresh saw last
	e.c.e.Refresh()
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("after refresh the copy reads %q, want ada", got.Name)
	}
}
