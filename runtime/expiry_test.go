package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

// TestEveryPathLearnsTheExpiry stores a hot key's copy by each path that
// stores one, on the manual clock with invalidate=off (nothing but the
// clock ends a copy), while Redis gives the key an hour to live; Redis's
// value then changes behind the copy's back, keeping its TTL. The copy is
// served 59 minutes on, and not once the hour has passed on the clock:
// the read asks Redis, and gets what it holds.
func TestEveryPathLearnsTheExpiry(t *testing.T) {
	const key = "p:1"
	load := func(context.Context, string) (*profile, error) { return sample(1, "loaded"), nil }
	loadMany := func(context.Context, []string) (map[string]*profile, error) {
		return map[string]*profile{key: sample(1, "loaded")}, nil
	}
	absent := func(context.Context, string) (*profile, error) { return nil, ErrNotFound }
	hour := []Option{WithTTL(time.Hour), WithJitter(0)}
	for _, tc := range []struct {
		name  string
		opts  []Option
		store func(e *env) (held string) // stores the copy; held is what it holds ("" for absent)
	}{
		{"Get reads it (GET and PTTL)", hour, func(e *env) string {
			e.putPX(key, "v0", time.Hour)
			e.heat(key)
			return "v0"
		}},
		{"Set writes it", hour, func(e *env) string {
			e.put(key, sample(1, "v0"))
			e.heat(key)
			if err := e.c.Set(e.ctx, key, sample(1, "v1")); err != nil {
				t.Fatal(err)
			}
			return "v1"
		}},
		{"GetMany reads it (MGET and PTTLs)", hour, func(e *env) string {
			e.putPX(key, "v0", time.Hour)
			for range 101 {
				if _, err := e.c.GetMany(e.ctx, []string{key}); err != nil {
					t.Fatal(err)
				}
			}
			if !holds(e.c, key) {
				t.Fatal("GetMany did not keep the key")
			}
			return "v0"
		}},
		{"refresh reloads changed bytes", hour, func(e *env) string {
			e.put(key, sample(1, "v0"))
			e.heat(key)
			e.putPX(key, "v1", time.Hour) // unheard, with invalidation off
			e.c.refresh()
			return "v1"
		}},
		{"refresh finds the same bytes, with a TTL now", hour, func(e *env) string {
			e.put(key, sample(1, "v0"))
			e.heat(key)
			if err := e.raw.PExpire(e.ctx, key, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			e.c.refresh()
			return "v0"
		}},
		{"the loader's write-back", append([]Option{WithLoader(load)}, hour...), func(e *env) string {
			e.heat(key)
			e.forget(key)
			e.get(key) // loads, writes back, keeps
			return "loaded"
		}},
		{"the batch loader's write-back", append([]Option{WithBatchLoader(loadMany)}, hour...), func(e *env) string {
			e.put(key, sample(1, "v0"))
			e.heat(key)
			e.forget(key)
			if _, err := e.c.GetMany(e.ctx, []string{key}); err != nil {
				t.Fatal(err)
			}
			return "loaded"
		}},
		{"a placeholder read, ttl=0", []Option{WithLoader(absent), WithNullTTL(time.Hour), WithJitter(0)}, func(e *env) string {
			for range 101 { // the first read writes the placeholder back
				if _, err := e.c.Get(e.ctx, key); !errors.Is(err, ErrNotFound) {
					t.Fatalf("Get = %v, want ErrNotFound", err)
				}
			}
			if !holds(e.c, key) {
				t.Fatal("the placeholder is not held")
			}
			return ""
		}},
		{"the placeholder's write-back, ttl=0", []Option{WithLoader(absent), WithNullTTL(time.Hour), WithJitter(0)}, func(e *env) string {
			e.put(key, sample(1, "v0"))
			e.heat(key)
			e.forget(key)
			if _, err := e.c.Get(e.ctx, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get = %v, want ErrNotFound", err)
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			held := tc.store(e)
			b, err := msgpack.Marshal(sample(1, "behind"))
			if err != nil {
				t.Fatal(err)
			}
			if err := e.raw.SetArgs(e.ctx, key, b, redis.SetArgs{KeepTTL: true}).Err(); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(59 * time.Minute)
			if got := e.read(key); got != held {
				t.Fatalf("59 minutes on, the copy of %q was not served: read %q", held, got)
			}
			e.clock.Advance(time.Minute)
			if got := e.read(key); got != "behind" {
				t.Fatalf("an hour on, when Redis has expired the copy's key, read %q, want Redis's %q", got, "behind")
			}
		})
	}
}

// putPX stores a profile named name at key, as another client would, to
// expire in px.
func (e *env) putPX(key, name string, px time.Duration) {
	e.t.Helper()
	b, err := msgpack.Marshal(sample(1, name))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.raw.Set(e.ctx, key, b, px).Err(); err != nil {
		e.t.Fatal(err)
	}
}

// forget deletes hot key from Redis and has refresh drop its copy, so
// that the next read of it, still hot, misses.
func (e *env) forget(key string) {
	e.t.Helper()
	if err := e.raw.Del(e.ctx, key).Err(); err != nil {
		e.t.Fatal(err)
	}
	e.c.refresh()
	if holds(e.c, key) || e.c.det.lookup(key) == nil {
		e.t.Fatalf("%q: still held, or no longer hot", key)
	}
}

// read returns the name of the profile at key, "" when it is absent.
func (e *env) read(key string) string {
	e.t.Helper()
	v, err := e.c.Get(e.ctx, key)
	if errors.Is(err, ErrNotFound) {
		return ""
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return v.Name
}

// TestNoStaleReadPastTheKeyTTL: while Redis cannot be reached, an
// unverified copy is served (a stale read) until its key's expiry, and
// not from then on: Redis, back, would hold nothing.
func TestNoStaleReadPastTheKeyTTL(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithTTL(time.Hour), WithJitter(0), WithRefreshFailures(3))
	e.putPX("p:1", "ada", time.Hour)
	e.heat("p:1")

	srv.Kill()
	e.tick(DefaultRefresh) // one failure: the copy is kept, unverified
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatal("hot key not served while Redis is down")
	}
	e.clock.Advance(time.Hour)
	if v, err := e.c.Get(e.ctx, "p:1"); err == nil || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("an hour on, with Redis down, Get = %+v, %v; want ErrUnavailable, the key having expired", v, err)
	}
	if st := e.c.Stats(); st.StaleReads != 1 {
		t.Fatalf("StaleReads = %d, want 1: the read before expiry", st.StaleReads)
	}
}

// TestGetManyLearnsExpiriesOnACluster: the PTTLs of a batch go with its
// MGETs to each key's node, and each copy expires with its own key.
func TestGetManyLearnsExpiriesOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	clk := fakeclock.New(epoch)
	c, err := New(cl.Client(t), profileGlue, WithClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10),
		WithInvalidate(InvalidateOff), WithTTL(time.Hour), WithJitter(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()
	raw := cl.Client(t)
	keys := []string{"p:1", "p:2", "p:3", "p:4", "p:5", "p:6"}
	set := func(key, name string, args redis.SetArgs) {
		t.Helper()
		b, _ := msgpack.Marshal(sample(1, name))
		if err := raw.SetArgs(ctx, key, b, args).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, key := range keys { // p:1 lives one hour, p:2 two, …
		set(key, "v0", redis.SetArgs{TTL: time.Duration(i+1) * time.Hour})
	}
	for range 101 {
		if _, err := c.GetMany(ctx, keys); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range keys {
		if !holds(c, key) {
			t.Fatalf("%s not held", key)
		}
		set(key, "behind", redis.SetArgs{KeepTTL: true})
	}
	for h := range keys { // h hours and 59 minutes on, h keys have expired
		clk.Advance(59 * time.Minute)
		vs, err := c.GetMany(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			want := "v0"
			if i < h {
				want = "behind"
			}
			if v.Name != want {
				t.Fatalf("%dh59m on, %s reads %q, want %q", h, keys[i], v.Name, want)
			}
		}
		clk.Advance(time.Minute)
	}
}

// TestCollectionWriteBackLearnsTheExpiry: a hot owner's collection,
// loaded and written back by the write script, expires with the TTL the
// script gave its hash.
func TestCollectionWriteBackLearnsTheExpiry(t *testing.T) {
	srv := redistest.Start(t)
	load := func(_ context.Context, k loginOwner) (map[string]*login, error) {
		return map[string]*login{"a": {User: k.User, Platform: k.Platform, Token: "a"}}, nil
	}
	e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue, WithCollectionLoader(load)) // ttl=1h
	owner := loginOwner{42, "ios"}
	key := owner.String()
	for range 101 { // the first read loads and writes back
		e.all(owner)
	}
	if err := e.raw.Del(e.ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	e.c.c.refresh() // drops the copy; the owner stays hot
	if holds(e.c.c, owner) {
		t.Fatal("the owner's copy outlived its deleted hash")
	}
	e.all(owner) // loads, writes back, keeps
	if !holds(e.c.c, owner) {
		t.Fatal("the written-back collection is not held")
	}
	b, err := msgpack.Marshal(&login{User: 42, Platform: "ios", Token: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.raw.HSet(e.ctx, key, "b", b).Err(); err != nil { // the hash keeps its TTL
		t.Fatal(err)
	}
	e.clock.Advance(59 * time.Minute)
	if got := tokensOf(e.all(owner)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("59 minutes on, the copy was not served: read %q", got)
	}
	e.clock.Advance(time.Minute)
	if got := tokensOf(e.all(owner)); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("an hour on, when Redis has expired the copy's key, read %q, want Redis's [a b]", got)
	}
}
