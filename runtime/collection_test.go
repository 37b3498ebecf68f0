package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/config"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// login is a collection item: one login token of a user on a platform.
type login struct {
	User      int64
	Platform  string
	Token     string
	Status    int
	ExpiresAt time.Time
}

type loginOwner struct {
	User     int64
	Platform string
}

func (k loginOwner) String() string {
	return "login:" + strconv.FormatInt(k.User, 10) + ":" + string(AppendKeyString(nil, k.Platform, "%:"))
}

func cloneLogin(v *login) *login { c := *v; return &c }

// loginGlue is what the generator writes for
// key=login:{User}:{Platform} layout=hash field={Token} expires=ExpiresAt,
// with msgpack's reflection for the items.
var loginGlue = CollectionGlue[loginOwner, string, login]{
	Key:        loginOwner.String,
	Prefix:     "login:",
	Clone:      cloneLogin,
	Owner:      func(v *login) loginOwner { return loginOwner{v.User, v.Platform} },
	Field:      func(v *login) string { return v.Token },
	FieldName:  func(f string) string { return string(AppendKeyString(nil, f, "%:")) },
	Expires:    func(v *login) time.Time { return v.ExpiresAt },
	ExpiresKey: "ExpiresAt",
}

// colEnv is a Collection on real Redis with a manual clock that starts at
// the wall clock's now, since hash TTLs are absolute times in Redis.
type colEnv struct {
	t     *testing.T
	c     *Collection[loginOwner, string, login]
	clock *fakeclock.Clock
	raw   redis.UniversalClient // another client, as another process would be
	ctx   context.Context
	// native is set when the server expires hash fields itself: the
	// collection's writes then keep no %next index (layout.Hash).
	native bool
}

func newColEnv(t *testing.T, rdb, raw redis.UniversalClient, glue CollectionGlue[loginOwner, string, login], opts ...Option) *colEnv {
	t.Helper()
	clk := fakeclock.New(time.Now().Truncate(time.Millisecond))
	base := []Option{WithEntity("login"), withClock(clk), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10),
		WithInvalidate(InvalidateOff), WithJitter(0), WithTTL(time.Hour)}
	c, err := NewCollection(rdb, glue, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	native, err := layout.FieldExpiry(t.Context(), raw)
	if err != nil {
		t.Fatal(err)
	}
	return &colEnv{t: t, c: c, clock: clk, raw: raw, ctx: context.Background(), native: native && glue.ExpiresKey != ""}
}

func (e *colEnv) hset(items ...*login) {
	e.t.Helper()
	if err := e.c.HSet(e.ctx, items...); err != nil {
		e.t.Fatalf("HSet: %v", err)
	}
}

func (e *colEnv) all(k loginOwner) map[string]*login {
	e.t.Helper()
	m, err := e.c.HGetAll(e.ctx, k)
	if err != nil {
		e.t.Fatalf("HGetAll(%v): %v", k, err)
	}
	return m
}

// fields returns the fields of key's hash in Redis, sorted.
// stored is the sorted fields of a hash of items written by the
// collection, the script's %next index first when the server takes it.
func (e *colEnv) stored(items ...string) []string {
	if !e.native {
		items = append(items, "%next")
	}
	slices.Sort(items)
	return items
}

func (e *colEnv) fields(key string) []string {
	e.t.Helper()
	fs, err := e.raw.HKeys(e.ctx, key).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Sort(fs)
	return fs
}

// expireTime returns PEXPIRETIME of key: Unix ms, -1 without a TTL, -2
// when the key is missing.
func (e *colEnv) expireTime(key string) int64 {
	e.t.Helper()
	n, err := e.raw.Do(e.ctx, "PEXPIRETIME", key).Int64()
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func tokensOf(m map[string]*login) []string {
	return slices.Sorted(maps.Keys(m))
}

// topologies runs f against a single server and a three-master cluster.
func topologies(t *testing.T, f func(t *testing.T, rdb, raw redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		f(t, srv.Client(t), srv.Client(t))
	})
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.StartCluster(t, 3)
		f(t, cl.Client(t), cl.Client(t))
	})
}

// TestCollectionMethods runs every method of a collection against real
// Redis, single and clustered, and checks what Redis holds after each.
func TestCollectionMethods(t *testing.T) {
	topologies(t, func(t *testing.T, rdb, raw redis.UniversalClient) {
		e := newColEnv(t, rdb, raw, loginGlue)
		ada, bob := loginOwner{42, "ios"}, loginOwner{7, "web:beta"}
		later := e.clock.Now().Add(24 * time.Hour)
		e.hset(&login{User: 42, Platform: "ios", Token: "t1", Status: 1, ExpiresAt: later})
		// Several items, of two owners, in one call: one pipeline of
		// EVALSHAs, and EVALs where a node lacks the script.
		if err := raw.ScriptFlush(e.ctx).Err(); err != nil {
			t.Fatal(err)
		}
		e.hset(&login{User: 42, Platform: "ios", Token: "t:2", ExpiresAt: later},
			&login{User: 7, Platform: "web:beta", Token: "b1", ExpiresAt: later})

		if got := e.fields("login:42:ios"); !slices.Equal(got, e.stored("t%3A2", "t1")) {
			t.Fatalf("fields of login:42:ios = %q; want the items' fields, escaped as key parts, and the expiries", got)
		}
		if got := e.fields("login:7:web%3Abeta"); !slices.Equal(got, e.stored("b1")) {
			t.Fatalf("fields of bob's hash = %q", got)
		}
		raw1, err := raw.HGet(e.ctx, "login:42:ios", "t1").Bytes()
		if err != nil {
			t.Fatal(err)
		}
		var plain login
		if err := msgpack.Unmarshal(raw1, &plain); err != nil || plain.Status != 1 || plain.Token != "t1" {
			t.Fatalf("the item's value is not the struct's msgpack: %+v, %v", plain, err)
		}

		if got := tokensOf(e.all(ada)); !slices.Equal(got, []string{"t1", "t:2"}) {
			t.Fatalf("HGetAll = %q", got)
		}
		v, err := e.c.HGet(e.ctx, ada, "t:2")
		if err != nil || v.Token != "t:2" || !v.ExpiresAt.Equal(later) {
			t.Fatalf("HGet t:2 = %+v, %v", v, err)
		}
		if _, err := e.c.HGet(e.ctx, ada, "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("HGet of a missing item: %v, want ErrNotFound", err)
		}
		many, err := e.c.HGetAllMany(e.ctx, []loginOwner{ada, {1, "none"}, bob})
		if err != nil {
			t.Fatal(err)
		}
		if len(many) != 3 || len(many[0]) != 2 || len(many[1]) != 0 || many[2]["b1"] == nil {
			t.Fatalf("HGetAllMany = %v", many)
		}

		if err := e.c.HDel(e.ctx, ada, "t1"); err != nil {
			t.Fatal(err)
		}
		if got := e.fields("login:42:ios"); !slices.Equal(got, e.stored("t%3A2")) {
			t.Fatalf("fields after HDel = %q", got)
		}
		if err := e.c.Del(e.ctx, ada); err != nil {
			t.Fatal(err)
		}
		if n := raw.Exists(e.ctx, "login:42:ios").Val(); n != 0 {
			t.Fatal("the hash is still there after Del")
		}
		if m := e.all(ada); len(m) != 0 {
			t.Fatalf("HGetAll after Del = %v, want empty", m)
		}
	})
}

// TestCollectionExpiry checks both layers of expiry: an item past its
// expiry is never returned, a write deletes the owner's expired items, the
// hash's TTL only moves forward, and an idle collection expires with its
// latest item.
func TestCollectionExpiry(t *testing.T) {
	topologies(t, func(t *testing.T, rdb, raw redis.UniversalClient) {
		e := newColEnv(t, rdb, raw, loginGlue)
		k, key := loginOwner{42, "ios"}, "login:42:ios"
		now := e.clock.Now()
		at := func(d time.Duration) time.Time { return now.Add(d) }

		e.hset(&login{User: 42, Platform: "ios", Token: "long", ExpiresAt: at(2 * time.Hour)},
			&login{User: 42, Platform: "ios", Token: "short", ExpiresAt: at(time.Minute)})
		if got := e.expireTime(key); got != at(2*time.Hour).UnixMilli() {
			t.Fatalf("PEXPIRETIME = %d, want the latest item's expiry %d", got, at(2*time.Hour).UnixMilli())
		}

		// Expiry on read: Redis still holds the item, no read returns it.
		e.clock.Advance(2 * time.Minute)
		if got := tokensOf(e.all(k)); !slices.Equal(got, []string{"long"}) {
			t.Fatalf("HGetAll after short expired = %q", got)
		}
		if _, err := e.c.HGet(e.ctx, k, "short"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("HGet of an expired item: %v, want ErrNotFound", err)
		}
		if !slices.Contains(e.fields(key), "short") {
			t.Fatal("the expired item left Redis without a write; this test wants it there to show reads skip it")
		}

		// Cleanup on write: a write of another item deletes it, in the
		// same round trip. A server that expires hash fields itself does
		// so by its own clock, which this test's does not move: it keeps
		// the item until then (layout's native tests show it go).
		e.hset(&login{User: 42, Platform: "ios", Token: "new", ExpiresAt: at(30 * time.Minute)})
		want := e.stored("long", "new")
		if e.native {
			want = e.stored("long", "new", "short")
		}
		if got := e.fields(key); !slices.Equal(got, want) {
			t.Fatalf("fields after a write = %q, want %q: the expired item should be gone", got, want)
		}
		// An earlier expiry never shortens the hash's life...
		if got := e.expireTime(key); got != at(2*time.Hour).UnixMilli() {
			t.Fatalf("PEXPIRETIME after an earlier item = %d, want it kept at %d", got, at(2*time.Hour).UnixMilli())
		}
		// ...and a later one extends it.
		e.hset(&login{User: 42, Platform: "ios", Token: "later", ExpiresAt: at(5 * time.Hour)})
		if got := e.expireTime(key); got != at(5*time.Hour).UnixMilli() {
			t.Fatalf("PEXPIRETIME after a later item = %d, want %d", got, at(5*time.Hour).UnixMilli())
		}
		// An item without an expiry keeps the hash for ttl (1h here),
		// which does not cut the 5h item short.
		e.hset(&login{User: 42, Platform: "ios", Token: "forever"})
		if got := e.expireTime(key); got != at(5*time.Hour).UnixMilli() {
			t.Fatalf("PEXPIRETIME after an item without expiry = %d, want %d", got, at(5*time.Hour).UnixMilli())
		}

		// An idle collection expires: a hash whose only item expires
		// in 300 ms of real time is gone soon after.
		idle := loginOwner{9, "tv"}
		e.hset(&login{User: 9, Platform: "tv", Token: "x", ExpiresAt: time.Now().Add(300 * time.Millisecond)})
		deadline := time.Now().Add(5 * time.Second)
		for raw.Exists(e.ctx, idle.String()).Val() == 1 {
			if time.Now().After(deadline) {
				t.Fatalf("the idle collection is still in Redis, PEXPIRETIME %d", e.expireTime(idle.String()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestCollectionTTLWithoutExpires checks the rule of a collection without
// item expiries: the hash lives ttl after a write, renewed only when the
// TTL it has would cut the new item short.
func TestCollectionTTLWithoutExpires(t *testing.T) {
	srv := redistest.Start(t)
	glue := loginGlue
	glue.Expires, glue.ExpiresKey = nil, ""
	e := newColEnv(t, srv.Client(t), srv.Client(t), glue)
	key := "login:1:ios"
	item := func(tok string) *login { return &login{User: 1, Platform: "ios", Token: tok} }
	e.hset(item("a"))
	if got, want := e.expireTime(key), e.clock.Now().Add(time.Hour).UnixMilli(); got != want {
		t.Fatalf("PEXPIRETIME = %d, want ttl after the write %d", got, want)
	}
	if got := e.fields(key); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("fields = %q: without expires there is no index", got)
	}
	// The old item's TTL is nearly over: the new item's write renews it.
	e.clock.Advance(59 * time.Minute)
	if err := e.raw.PExpireAt(e.ctx, key, e.clock.Now().Add(time.Minute)).Err(); err != nil {
		t.Fatal(err)
	}
	e.hset(item("b"))
	if got, want := e.expireTime(key), e.clock.Now().Add(time.Hour).UnixMilli(); got != want {
		t.Fatalf("PEXPIRETIME after a write near the end = %d, want %d", got, want)
	}
	// A TTL longer than the new item needs is left alone.
	far := e.clock.Now().Add(10 * time.Hour)
	if err := e.raw.PExpireAt(e.ctx, key, far).Err(); err != nil {
		t.Fatal(err)
	}
	e.hset(item("c"))
	if got := e.expireTime(key); got != far.UnixMilli() {
		t.Fatalf("PEXPIRETIME = %d, want the longer TTL %d kept", got, far.UnixMilli())
	}
}

// TestHotCollection heats an owner: its collection is then served from
// memory, single items from the same copy, each caller gets its own copy,
// and a write by another client is seen within 50 ms.
func TestHotCollection(t *testing.T) {
	topologies(t, func(t *testing.T, rdb, raw redis.UniversalClient) {
		e := newColEnv(t, rdb, raw, loginGlue, WithInvalidate(InvalidateTracking))
		k := loginOwner{42, "ios"}
		later := e.clock.Now().Add(time.Hour)
		e.hset(&login{User: 42, Platform: "ios", Token: "t1", ExpiresAt: later})
		for range 101 {
			e.all(k)
		}
		// Invalidation tracking starts asynchronously: read until local.
		deadline := time.Now().Add(10 * time.Second)
		for !servesLocally(e.c.e.Cache(), k) {
			if time.Now().After(deadline) {
				t.Fatal("the hot collection is never served locally")
			}
			e.all(k)
			time.Sleep(5 * time.Millisecond)
		}
		hits := e.c.Stats().Hits
		m := e.all(k)
		m["t1"].Status = 99 // the caller's own copy
		delete(m, "t1")
		v, err := e.c.HGet(e.ctx, k, "t1")
		if err != nil || v.Status != 0 {
			t.Fatalf("HGet from the hot copy = %+v, %v; an earlier caller's change leaked", v, err)
		}
		if got := e.c.Stats().Hits; got < hits+2 {
			t.Fatalf("Hits went from %d to %d over two reads of a hot owner: not served locally", hits, got)
		}

		// Another client writes an item with a plain HSET.
		b, err := msgpack.Marshal(&login{User: 42, Platform: "ios", Token: "t2", ExpiresAt: later})
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.HSet(e.ctx, "login:42:ios", "t2", b).Err(); err != nil {
			t.Fatal(err)
		}
		// Seen at all here; within the bound is the history checker's
		// verdict (TestPromisesHoldForCollections), not a clock's on a
		// loaded machine.
		waitFor(t, "a raw HSET to be seen", func() bool {
			_, err := e.c.HGet(e.ctx, k, "t2")
			return err == nil
		})
		// The writer reads its own write, hot or not.
		e.hset(&login{User: 42, Platform: "ios", Token: "t3", ExpiresAt: later})
		if got := tokensOf(e.all(k)); !slices.Equal(got, []string{"t1", "t2", "t3"}) {
			t.Fatalf("HGetAll after HSet = %q", got)
		}
		// Expiry applies to the local copy too.
		e.clock.Advance(2 * time.Hour)
		if got := e.all(k); len(got) != 0 {
			t.Fatalf("HGetAll of a hot owner after every item expired = %q", tokensOf(got))
		}
		if _, err := e.c.HGet(e.ctx, k, "t1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("HGet of an expired item of a hot owner: %v", err)
		}
	})
}

// TestCollectionLoader loads whole collections, writes them back as
// hashes, remembers absent owners, and refreshes hot owners.
func TestCollectionLoader(t *testing.T) {
	srv := redistest.Start(t)
	var calls atomic.Int32
	later := time.Now().Add(time.Hour)
	load := func(_ context.Context, k loginOwner) (map[string]*login, error) {
		calls.Add(1)
		if k.User != 42 {
			return nil, fmt.Errorf("no such user: %w", ErrNotFound)
		}
		return map[string]*login{
			"a": {User: 42, Platform: k.Platform, Token: "a", ExpiresAt: later},
			"b": {User: 42, Platform: k.Platform, Token: "b", ExpiresAt: later},
		}, nil
	}
	e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue, WithCollectionLoader(load))
	if got := tokensOf(e.all(loginOwner{42, "ios"})); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("HGetAll through the loader = %q", got)
	}
	if got := e.fields("login:42:ios"); !slices.Equal(got, e.stored("a", "b")) {
		t.Fatalf("written back as fields %q", got)
	}
	if got := e.expireTime("login:42:ios"); got != later.UnixMilli() {
		t.Fatalf("PEXPIRETIME of the written-back hash = %d, want %d", got, later.UnixMilli())
	}
	// HGet of a loaded owner is an HGET; of a missing one, a load.
	if v, err := e.c.HGet(e.ctx, loginOwner{42, "web"}, "b"); err != nil || v.Token != "b" {
		t.Fatalf("HGet through the loader = %+v, %v", v, err)
	}
	before := calls.Load()
	for range 3 {
		if m := e.all(loginOwner{5, "ios"}); len(m) != 0 {
			t.Fatalf("an absent owner reads as %v", m)
		}
	}
	if got := calls.Load() - before; got != 1 {
		t.Fatalf("3 reads of an absent owner called the loader %d times, want 1 (null caching)", got)
	}
	// A write replaces the placeholder.
	e.hset(&login{User: 5, Platform: "ios", Token: "z", ExpiresAt: later})
	if got := e.fields("login:5:ios"); !slices.Equal(got, e.stored("z")) {
		t.Fatalf("fields after a write over the placeholder = %q", got)
	}
	if got := tokensOf(e.all(loginOwner{5, "ios"})); !slices.Equal(got, []string{"z"}) {
		t.Fatalf("HGetAll = %q", got)
	}

	// A hot owner is refreshed with HGETALL.
	hot := loginOwner{42, "ios"}
	for range 101 {
		e.all(hot)
	}
	if e.c.e.Cache().Detector().Lookup(hot) == nil {
		t.Fatal("not hot after 101 reads")
	}
	refreshes := e.c.Stats().Refreshes
	e.c.e.Cache().Refresh()
	if got := e.c.Stats().Refreshes; got != refreshes+1 {
		t.Fatalf("Refreshes %d → %d after one refresh of one hot owner", refreshes, got)
	}
}

// TestCollectionHostile reads items whose bytes are not the struct, and
// writes over an expiry index that is not msgpack.
func TestCollectionHostile(t *testing.T) {
	srv := redistest.Start(t)
	e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue)
	k := loginOwner{1, "ios"}
	if err := e.raw.HSet(e.ctx, "login:1:ios", "bad", "\xdf\xff\xff\xff\xff", "%next", "\xc1garbage").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.HGetAll(e.ctx, k); !errors.Is(err, ErrDecode) {
		t.Fatalf("HGetAll of a hostile item: %v, want ErrDecode", err)
	}
	if _, err := e.c.HGet(e.ctx, k, "bad"); !errors.Is(err, ErrDecode) {
		t.Fatalf("HGet of a hostile item: %v, want ErrDecode", err)
	}
	e.hset(&login{User: 1, Platform: "ios", Token: "ok", ExpiresAt: e.clock.Now().Add(time.Hour)})
	if v, err := e.c.HGet(e.ctx, k, "ok"); err != nil || v.Token != "ok" {
		t.Fatalf("HGet after a write over a garbage index = %+v, %v", v, err)
	}
}

// TestHotCollectionUnderLoad keeps a collection hot with four paced
// readers while another client adds items with plain HSETs: each item is
// seen by a read within 50 ms of its write, and most reads are served
// from memory.
func TestHotCollectionUnderLoad(t *testing.T) {
	srv := redistest.Start(t)
	e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue, WithInvalidate(InvalidateTracking))
	k := loginOwner{42, "ios"}
	later := e.clock.Now().Add(time.Hour)
	e.hset(&login{User: 42, Platform: "ios", Token: "seed", ExpiresAt: later})
	ctx, stop := context.WithCancel(e.ctx)
	defer stop()
	var readers atomic.Int32
	done := make(chan struct{})
	for range 4 {
		readers.Add(1)
		go func() {
			defer func() {
				if readers.Add(-1) == 0 {
					close(done)
				}
			}()
			for ctx.Err() == nil {
				if _, err := e.c.HGetAll(ctx, k); err != nil && ctx.Err() == nil {
					t.Errorf("HGetAll under load: %v", err)
					return
				}
				time.Sleep(200 * time.Microsecond) // paced: the bound is the runtime's, not the scheduler's
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for !servesLocally(e.c.e.Cache(), k) {
		if time.Now().After(deadline) {
			t.Fatal("the collection never became hot under load")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := range 20 {
		tok := "w" + strconv.Itoa(i)
		b, err := msgpack.Marshal(&login{User: 42, Platform: "ios", Token: tok, ExpiresAt: later})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.raw.HSet(e.ctx, "login:42:ios", tok, b).Err(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("write %d (%s) to be seen", i, tok), func() bool {
			m, err := e.c.HGetAll(e.ctx, k)
			return err == nil && m[tok] != nil
		})
	}
	// Once the writes stop, the collection is served from memory again,
	// every item in it. Judged by a read served locally, not by a copy
	// seen verified: the last write's invalidation may still be on its way
	// when a read from Redis has already seen the write, and a copy
	// verified just before it is revoked by it.
	stop()
	<-done
	waitFor(t, "the collection served from memory again, every item in it", func() bool {
		hits := e.c.Stats().Hits
		return len(e.all(k)) == 21 && e.c.Stats().Hits == hits+1
	})
}

// An outage right after this instance's own write of a hot owner's
// collection, before the copy is read back: the owner is still served
// from memory, with the write in it (it was refused, the copy being older
// than the write: 3.9% of the hot reads of a DEBUG SLEEP in the soak).
func TestAnOwnCollectionWriteJustBeforeAnOutageIsServed(t *testing.T) {
	srv := redistest.Start(t)
	e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue)
	k := loginOwner{42, "ios"}
	later := e.clock.Now().Add(time.Hour)
	e.hset(&login{User: 42, Platform: "ios", Token: "t1", ExpiresAt: later}) // the script is loaded
	for range 101 {
		e.all(k)
	}
	if !servesLocally(e.c.e.Cache(), k) {
		t.Fatal("the owner is not served from memory")
	}
	e.c.e.Cache().Client().AddHook(after("evalsha", srv.Kill)) // Redis dies as the write is answered
	e.hset(&login{User: 42, Platform: "ios", Token: "t2", ExpiresAt: later})
	for range 10 {
		if got := tokensOf(e.all(k)); !slices.Equal(got, []string{"t1", "t2"}) {
			t.Fatalf("HGetAll during the outage = %q, want the copy with our write, [t1 t2]", got)
		}
	}
	if e.c.Stats().StaleReads == 0 {
		t.Fatal("the reads of an outage are not counted as stale reads")
	}
}

// Issue 50, item 3, for collections: an HSet or an HDel by one build
// deletes the owner's hash under the neighbouring versions in the same
// round trip, so the other build's readers, a hot copy held, read the
// owner's items from their loader, the source of truth, once the write is
// acknowledged (before: their own hash until its TTL).
func TestAnHSetReachesTheBuildOfTheNeighbouringVersion(t *testing.T) {
	v2Glue := loginGlue
	v2Glue.Key = func(k loginOwner) string { return "login:v2:" + strings.TrimPrefix(k.String(), "login:") }
	v2Glue.Prefix, v2Glue.Version = "login:v2:", 2
	owner := loginOwner{User: 7, Platform: "ios"}
	item := func(status int) *login {
		return &login{User: 7, Platform: "ios", Token: "t1", Status: status, ExpiresAt: time.Now().Add(time.Hour).Truncate(time.Millisecond)}
	}
	for _, tc := range []struct {
		name   string
		writer int // the build that writes: 1 or 2
		del    bool
		mode   string
	}{
		{name: "version 2 sets an item, version 1 reads", writer: 2},
		{name: "version 1 sets an item, version 2 reads", writer: 1},
		{name: "version 1 deletes an item, version 2 reads", writer: 1, del: true},
		{name: "pubsub: version 2 deletes an item, version 1 reads", writer: 2, del: true, mode: InvalidatePubSub},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			var mu sync.Mutex
			db := map[string]*login{"t1": item(1), "t2": item(1)} // the owner's items in the database
			db["t2"].Token = "t2"
			load := WithCollectionLoader(func(ctx context.Context, k loginOwner) (map[string]*login, error) {
				mu.Lock()
				defer mu.Unlock()
				return maps.Clone(db), nil
			})
			opts := []Option{WithEntity("login"), withClock(config.Wall{}), WithLogger(quiet), WithHotQPS(100), WithWarmQPS(10),
				WithInvalidate(cmp.Or(tc.mode, InvalidateTracking)), WithTTL(time.Hour), load}
			builds := map[int]*Collection[loginOwner, string, login]{}
			for v, glue := range map[int]CollectionGlue[loginOwner, string, login]{1: loginGlue, 2: v2Glue} {
				c, err := NewCollection(srv.Client(t), glue, opts...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				builds[v] = c
			}
			writer, reader := builds[tc.writer], builds[3-tc.writer]
			ctx := t.Context()
			for _, c := range builds {
				if v, err := c.HGet(ctx, owner, "t1"); err != nil || v.Status != 1 {
					t.Fatalf("HGet = %+v, %v", v, err)
				}
			}
			waitFor(t, "the reader's copy served locally", func() bool {
				reader.HGet(ctx, owner, "t1")
				return servesLocally(reader.e.Cache(), owner)
			})

			mu.Lock() // the database's update
			if tc.del {
				delete(db, "t1")
			} else {
				db["t1"] = item(2)
			}
			mu.Unlock()
			var err error
			if tc.del {
				err = writer.HDel(ctx, owner, "t1")
			} else {
				err = writer.HSet(ctx, item(2))
			}
			if err != nil {
				t.Fatal(err)
			}
			first := readsAfterAWrite(t, func() (bool, any, error) {
				v, err := reader.HGet(ctx, owner, "t1")
				if tc.del && errors.Is(err, ErrNotFound) {
					return true, nil, nil
				}
				return err == nil && !tc.del && v.Status == 2, v, err
			})
			t.Logf("the other build read the database's items %v after the write was acknowledged", first)
		})
	}
}
