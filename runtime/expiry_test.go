package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// Finding 6 of issue 21: a hot key outlived its Redis TTL. Its local copy
// was served until an invalidation came (with tracking, when the server's
// active expiry reclaimed the key, tens of ms late) or until refresh (with
// pubsub and off, seconds late), while a GET would have answered nil.
//
// TestNoCopyIsServedPastItsKeyTTL runs on the wall clock, Redis's own,
// and judges by order, not by elapsed time: Redis holds a key through the
// millisecond PEXPIRETIME names, so a read that begins in a later
// millisecond must not return the value, whatever the machine's load. A
// row whose key expired before it was even hot, or that never served the
// key from memory, proves nothing: it runs again with a longer TTL.

// ttlRow is one way a hot key gets its TTL.
type ttlRow struct {
	mode   string // invalidate=
	layout string // LayoutString or LayoutHash
	writer string // who sets the TTL: see the constants below
}

const (
	byRepository = "the repository"   // Set, or HSet, with the entity's ttl
	byOther      = "another client"   // SET PX, or HSET and PEXPIRE, before the key is read
	byShortening = "PEXPIRE shortens" // another client shortens the TTL of a hot key
)

func TestNoCopyIsServedPastItsKeyTTL(t *testing.T) {
	var rows []ttlRow
	for _, mode := range []string{InvalidateTracking, InvalidatePubSub, InvalidateOff} {
		for _, form := range []string{LayoutString, LayoutHash} {
			for _, writer := range []string{byRepository, byOther, byShortening} {
				// Only tracking hears a TTL that another client changes
				// on a key already read; the others hear no write of
				// another client at all.
				if writer == byShortening && mode != InvalidateTracking {
					continue
				}
				rows = append(rows, ttlRow{mode, form, writer})
			}
		}
	}
	for _, r := range rows {
		t.Run(fmt.Sprintf("%s/%s/%s", r.mode, r.layout, r.writer), func(t *testing.T) {
			for ttl := 300 * time.Millisecond; ; ttl *= 2 {
				if r.expires(t, ttl) {
					return
				}
				if ttl > 5*time.Second {
					t.Fatalf("the key was never served from memory before it expired, even with a ttl of %v", ttl)
				}
				t.Logf("with a ttl of %v the key was not served from memory before it expired: again, with more time", ttl)
			}
		})
	}
}

// ttlSubject is an entity of either layout, reduced to what the rows do.
type ttlSubject struct {
	c     interface{ Stats() Stats }
	key   string
	read  func() (found bool, err error)
	hot   func() bool            // hot and held locally
	write func() error           // the repository's write, with the entity's ttl
	put   func(px time.Duration) // another client's write, with PX px (0: none)
}

// expires plays r with keys living ttl, and fails the test on a read that
// returns the value after Redis expired it. It reports whether the row
// proved something: the key was served from memory, and expired.
func (r ttlRow) expires(t *testing.T, ttl time.Duration) bool {
	srv := redistest.Start(t)
	raw := srv.Client(t)
	ctx := context.Background()
	entityTTL := time.Hour
	if r.writer == byRepository {
		entityTTL = ttl
	}
	opts := []Option{WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10), WithInvalidate(r.mode),
		WithTTL(entityTTL), WithJitter(0)}
	s := r.subject(t, srv.Client(t), raw, opts)

	// heat reads the key until it is hot and held; false if it expired first.
	heat := func() bool {
		for range 100_000 {
			found, err := s.read()
			if err != nil {
				t.Fatal(err)
			}
			if !found {
				return false
			}
			if s.hot() {
				return true
			}
		}
		t.Fatalf("%s not hot after 100000 reads", s.key)
		return false
	}
	switch r.writer {
	case byRepository:
		if r.layout == LayoutString {
			s.put(0) // the copy is the repository's own write, not a read
			if !heat() {
				t.Fatal("a key without a TTL expired")
			}
		}
		if err := s.write(); err != nil {
			t.Fatal(err)
		}
		if r.layout == LayoutHash && !heat() {
			return false
		}
	case byOther:
		s.put(ttl)
		if !heat() {
			return false
		}
	case byShortening:
		s.put(0)
		if !heat() {
			t.Fatal("a key without a TTL expired")
		}
		if err := raw.PExpire(ctx, s.key, ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	when, err := raw.Do(ctx, "PEXPIRETIME", s.key).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if when < 0 {
		return false // expired already (-2)
	}

	hits := s.c.Stats().Hits
	deadline := time.Now().Add(ttl + time.Minute) // only against a hang: the loop ends at expiry
	for {
		begun := time.Now()
		found, err := s.read()
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			break
		}
		if begun.UnixMilli() > when {
			t.Fatalf("a read begun at %d ms returned the value, which Redis expired after %d ms (PEXPIRETIME); %d local hits",
				begun.UnixMilli(), when, s.c.Stats().Hits-hits)
		}
		if begun.After(deadline) {
			t.Fatal("the key never expired")
		}
	}
	for range 100 { // the expired copy stays expired
		if found, err := s.read(); found || err != nil {
			t.Fatalf("after expiry a read returned the value (%v) or failed: %v", found, err)
		}
	}
	return s.c.Stats().Hits > hits
}

// subject builds r's entity on rdb, with raw as another client.
func (r ttlRow) subject(t *testing.T, rdb, raw *redis.Client, opts []Option) ttlSubject {
	ctx := context.Background()
	if r.layout == LayoutString {
		c, err := New(rdb, profileGlue, append([]Option{WithEntity("profile")}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		const key = "p:1"
		return ttlSubject{
			c:   c,
			key: key,
			read: func() (bool, error) {
				_, err := c.Get(ctx, key)
				if errors.Is(err, ErrNotFound) {
					return false, nil
				}
				return err == nil, err
			},
			hot:   func() bool { return c.e.Detector().Lookup(key) != nil && holds(c.e, key) },
			write: func() error { return c.Set(ctx, key, sample(1, "v1")) },
			put: func(px time.Duration) {
				b, err := msgpack.Marshal(sample(1, "v0"))
				if err != nil {
					t.Fatal(err)
				}
				if err := raw.Set(ctx, key, b, px).Err(); err != nil {
					t.Fatal(err)
				}
			},
		}
	}
	col, err := NewCollection(rdb, loginGlue, append([]Option{WithEntity("login")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { col.Close() })
	owner := loginOwner{42, "ios"}
	item := &login{User: 42, Platform: "ios", Token: "t1", Status: 1} // no expiry of its own
	return ttlSubject{
		c:   col.e.Cache(),
		key: owner.String(),
		read: func() (bool, error) {
			m, err := col.HGetAll(ctx, owner)
			return len(m) > 0, err
		},
		hot:   func() bool { return col.e.Cache().Detector().Lookup(owner) != nil && holds(col.e.Cache(), owner) },
		write: func() error { return col.HSet(ctx, item) },
		put: func(px time.Duration) {
			b, err := msgpack.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			pipe := raw.TxPipeline()
			pipe.HSet(ctx, owner.String(), "t1", b)
			if px > 0 {
				pipe.PExpire(ctx, owner.String(), px)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		},
	}
}

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
			if !holds(e.c.e, key) {
				t.Fatal("GetMany did not keep the key")
			}
			return "v0"
		}},
		{"refresh reloads changed bytes", hour, func(e *env) string {
			e.put(key, sample(1, "v0"))
			e.heat(key)
			e.putPX(key, "v1", time.Hour) // unheard, with invalidation off
			e.c.e.Refresh()
			return "v1"
		}},
		{"refresh finds the same bytes, with a TTL now", hour, func(e *env) string {
			e.put(key, sample(1, "v0"))
			e.heat(key)
			if err := e.raw.PExpire(e.ctx, key, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			e.c.e.Refresh()
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
			if !holds(e.c.e, key) {
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
	e.c.e.Refresh()
	if holds(e.c.e, key) || e.c.e.Detector().Lookup(key) == nil {
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
	c, err := New(cl.Client(t), profileGlue, withClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10),
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
		if !holds(c.e, key) {
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
	e.c.e.Cache().Refresh() // drops the copy; the owner stays hot
	if holds(e.c.e.Cache(), owner) {
		t.Fatal("the owner's copy outlived its deleted hash")
	}
	e.all(owner) // loads, writes back, keeps
	if !holds(e.c.e.Cache(), owner) {
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

// A key that is not hot keeps no copy, so its read asks no TTL: a cold
// Get and a cold GetMany of an entity with a ttl cost Redis one command
// each. A hot key's read asks for its TTL in the same round trip, which
// its copy then lives by (TestNoCopyIsServedPastItsKeyTTL), and a read
// that did not ask keeps no copy.
func TestOnlyAHotKeysReadAsksItsTTL(t *testing.T) {
	e := newEnv(t, WithTTL(time.Hour), WithJitter(0))
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("p:%d", i)
		if err := e.c.Set(e.ctx, keys[i], sample(int64(i), "ada")); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.raw.ConfigResetStat(e.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		e.get(k)
	}
	if _, err := e.c.GetMany(e.ctx, keys); err != nil {
		t.Fatal(err)
	}
	stat := func(cmd string) int { return redistest.CommandStat(t, e.raw, cmd, "calls") }
	if gets, mgets, pttls := stat("get"), stat("mget"), stat("pttl"); gets != len(keys) || mgets != 1 || pttls != 0 {
		t.Fatalf("cold reads of %d keys, then of all at once, sent %d GETs, %d MGETs and %d PTTLs; want %d, 1 and 0",
			len(keys), gets, mgets, pttls, len(keys))
	}

	e.heat(keys[0])
	if stat("pttl") == 0 || !servesLocally(e.c.e, keys[0]) {
		t.Fatalf("a key made hot is held (%v) after %d PTTLs; want its TTL asked and the copy served", servesLocally(e.c.e, keys[0]), stat("pttl"))
	}
	hot := e.c.e.Detector().Lookup(keys[0])
	if e.c.e.Copies().Keep(hot, e.c.e.Copies().Begin(keys[0]), sample(0, "bob"), 0, 0, layout.Unasked) {
		t.Fatal("a copy was kept from a read that did not ask its key's TTL")
	}
	if got := e.get(keys[0]); got.Name != "ada" {
		t.Fatalf("the hot key reads %q after a keep without a TTL; want ada", got.Name)
	}
}
