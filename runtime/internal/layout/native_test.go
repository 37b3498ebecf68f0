package layout

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Hash whose items expire asks its server, on the first write, whether
// it expires hash fields itself, and takes the native form only where it
// does; a Hash whose items have no expiry, or that has no client to ask,
// never asks and keeps the script's. Each server of the matrix answers
// for itself: Redis 8.0 native, Valkey 8.1 and Redis 7.0 the script.
func TestAHashWritesInTheFormItsServerTakes(t *testing.T) {
	e := newEnv(t)
	want := e.serverForm()
	for _, c := range []struct {
		name string
		h    *Hash
		want int32
	}{
		{"items with expiries, asking the server", NewHash(e.clock, true, "ExpiresAt", false, e.rdb), want},
		{"items without expiries", NewHash(e.clock, true, "", false, e.rdb), formScript},
		{"no client to ask", NewHash(e.clock, true, "ExpiresAt", false, nil), formScript},
	} {
		e.write(c.h, "form", "a", e.clock.Now().Add(time.Hour))
		if got := c.h.formFor(e.ctx); got != c.want {
			t.Errorf("%s: form %d, want %d", c.name, got, c.want)
		}
	}
}

// The native form's writes, on a server that expires hash fields: each
// item's expiry is its field's, an item written again without one loses
// it, an item already expired is gone at once, the placeholder and the
// script's index are removed, and the hash's TTL moves as the script
// moves it. On a server without field expiry the same writes run the
// script, whose own tests are script_test.go's: the test then checks
// that the Hash did not take the native form.
func TestTheNativeFormKeepsEachItemsExpiryOnTheServer(t *testing.T) {
	e := newEnv(t)
	h := NewHash(e.clock, true, "ExpiresAt", false, e.rdb)
	now := e.clock.Now()
	if done, _ := h.SetNX(e.ctx, e.rdb, "h", Null, time.Minute); !done.Landed() {
		t.Fatal("the placeholder did not land")
	}
	if h.formFor(e.ctx) != formNative {
		if native, err := FieldExpiry(e.ctx, e.rdb); native || err != nil {
			t.Fatalf("the server expires hash fields (%v, %v), but the Hash took the script's form", native, err)
		}
		return
	}
	if err := e.rdb.HSet(e.ctx, "h", nextField, "-").Err(); err != nil {
		t.Fatal(err)
	}
	e.write(h, "h", "later", now.Add(time.Hour))
	e.write(h, "h", "soon", now.Add(time.Minute))
	e.write(h, "h", "gone", now.Add(-time.Second))
	if got, want := e.fields("h"), []string{"later", "soon"}; !slices.Equal(got, want) {
		t.Errorf("fields %q, want %q: the placeholder, the index and the expired item removed", got, want)
	}
	for field, exp := range map[string]time.Time{"later": now.Add(time.Hour), "soon": now.Add(time.Minute)} {
		if got := e.rdb.HPExpireTime(e.ctx, "h", field).Val(); len(got) != 1 || got[0] != exp.UnixMilli() {
			t.Errorf("HPEXPIRETIME %s = %v, want [%d]", field, got, exp.UnixMilli())
		}
	}
	if at := e.rdb.PExpireTime(e.ctx, "h").Val(); at != time.Duration(now.Add(time.Hour).UnixMilli())*time.Millisecond {
		t.Errorf("the hash's PEXPIRETIME %v, want the latest item's expiry", at)
	}

	if err := h.Run(e.ctx, e.rdb, h.SetItems("h", []Item{{Field: "soon", Value: []byte("again")}}, 2*time.Hour)).Err(); err != nil {
		t.Fatal(err)
	}
	if got := e.rdb.HPExpireTime(e.ctx, "h", "soon").Val(); len(got) != 1 || got[0] != -1 {
		t.Errorf("an item written again without an expiry has HPEXPIRETIME %v, want [-1]", got)
	}
	if at := e.rdb.PExpireTime(e.ctx, "h").Val(); at != time.Duration(now.Add(2*time.Hour).UnixMilli())*time.Millisecond {
		t.Errorf("the hash's PEXPIRETIME %v, want the new item's TTL", at)
	}
	if err := h.Run(e.ctx, e.rdb, h.DelItems("h", []string{"soon", "later"})).Err(); err != nil || e.rdb.Exists(e.ctx, "h").Val() != 0 {
		t.Errorf("deleting every item: %v, and the hash is left", err)
	}
	if done, _ := h.SetNX(e.ctx, e.rdb, "h", AppendItem(nil, "x", now.Add(time.Hour).UnixMilli(), []byte("1")), time.Minute); !done.Landed() {
		t.Error("a write-back of an absent hash did not land")
	}
	if done, _ := h.SetNX(e.ctx, e.rdb, "h", AppendItem(nil, "y", 0, []byte("2")), time.Minute); done.Landed() {
		t.Error("a write-back landed on a hash that exists")
	}
}

// A server that does not answer the probe (down at the first write) leaves
// the form unknown: that write takes the script's form, which every server
// runs, and a later write asks again.
func TestAnUnansweredProbeIsAskedAgain(t *testing.T) {
	e := newEnv(t)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	h := NewHash(e.clock, true, "ExpiresAt", false, dead)
	if got := h.formFor(e.ctx); got != formScript || h.form.Load() != formUnknown {
		t.Fatalf("with the server unreachable: form %d, remembered %d; want the script's, nothing remembered", got, h.form.Load())
	}
	want := e.serverForm()
	h.probe = e.rdb // the server answers now
	if got := h.formFor(e.ctx); got != want || h.form.Load() != want {
		t.Errorf("once the server answers: form %d, remembered %d; want %d", got, h.form.Load(), want)
	}
}
