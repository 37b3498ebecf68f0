package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/engine"
	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
)

// table stands in for a database: the loader reads it and counts calls.
type table struct {
	mu    sync.Mutex
	rows  map[string]*profile
	calls atomic.Int32
	gate  chan struct{} // when set, loads wait for it to close
}

func (tb *table) load(ctx context.Context, key string) (*profile, error) {
	tb.calls.Add(1)
	if tb.gate != nil {
		<-tb.gate
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if p, ok := tb.rows[key]; ok {
		return cloneProfile(p), nil
	}
	return nil, ErrNotFound
}

// many is load for a batch loader: the rows of ks it holds.
func (tb *table) many(ctx context.Context, ks []string) (map[string]*profile, error) {
	rows := map[string]*profile{}
	for _, k := range ks {
		switch p, err := tb.load(ctx, k); {
		case err == nil:
			rows[k] = p
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return rows, nil
}

func newTable(rows ...*profile) *table {
	tb := &table{rows: map[string]*profile{}}
	for _, p := range rows {
		tb.rows["p:"+strconv.FormatInt(p.ID, 10)] = p
	}
	return tb
}

func TestLoaderReadsThrough(t *testing.T) {
	tb := newTable(sample(1, "ada"))
	e := newEnv(t, WithLoader(tb.load), WithTTL(time.Hour))
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("Get = %q, want the loader's ada", got.Name)
	}
	var inRedis profile
	b, _ := e.raw.Get(e.ctx, "p:1").Bytes()
	if err := msgpack.Unmarshal(b, &inRedis); err != nil || inRedis.Name != "ada" {
		t.Fatalf("the loaded row was not written to Redis: %v %+v", err, inRedis)
	}
	if ttl := e.raw.TTL(e.ctx, "p:1").Val(); ttl < 57*time.Minute || ttl > 63*time.Minute {
		t.Fatalf("written with TTL %v, want 1h within the default 5%% jitter", ttl)
	}
	e.get("p:1")
	if n := tb.calls.Load(); n != 1 {
		t.Fatalf("loader called %d times, want 1: the second read is served by Redis", n)
	}
	if st := e.c.Stats(); st.Loads != 1 {
		t.Fatalf("Loads = %d, want 1", st.Loads)
	}
}

// A cache given only a batch loader loads Get's misses through it, one
// key at a time, as GetMany's, under the key's lease: a cold read, and a
// read of a key whose lease another process holds, get the row, not
// ErrNotFound; an absent row is ErrNotFound, asked once.
func TestGetLoadsThroughTheBatchLoaderAlone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    string
		leased bool   // the key holds a lease whose holder died
		want   string // "": ErrNotFound
	}{
		{name: "a cold key", key: "p:1", want: "ada"},
		{name: "a key another process holds the lease of", key: "p:1", leased: true, want: "ada"},
		{name: "an absent row", key: "p:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(sample(1, "ada"))
			e := newEnv(t, WithBatchLoader(tb.many), WithRebuildLockTTL(300*time.Millisecond), WithNullTTL(time.Minute))
			if tc.leased {
				dead := lease.Keys{TTL: 300 * time.Millisecond}.New(tc.key)
				if err := e.raw.Process(e.ctx, dead.Take(e.ctx)); !errors.Is(err, redis.Nil) {
					t.Fatalf("the dead holder's lease: %v", err)
				}
			}
			for read := range 2 { // the second from Redis, where the load wrote its row or placeholder
				got, err := e.c.Get(e.ctx, tc.key)
				switch {
				case tc.want == "" && !errors.Is(err, ErrNotFound):
					t.Fatalf("read %d: Get = %+v, %v; want ErrNotFound", read, got, err)
				case tc.want != "" && (err != nil || got.Name != tc.want):
					t.Fatalf("read %d: Get = %+v, %v; want the batch loader's %s", read, got, err, tc.want)
				}
				if n := tb.calls.Load(); n != 1 {
					t.Fatalf("read %d: the batch loader was asked %d times, want once", read, n)
				}
			}
		})
	}
}

func TestConcurrentMissesCallTheLoaderOnce(t *testing.T) {
	tb := newTable(sample(1, "ada"))
	tb.gate = make(chan struct{})
	e := newEnv(t, WithLoader(tb.load))
	const callers = 50
	missTogether(t, e, "p:1", "ada", callers, func() { close(tb.gate) })
	if n := tb.calls.Load(); n != 1 {
		t.Fatalf("%d concurrent misses called the loader %d times, want 1", callers, n)
	}
}

// TestAMissThatALoadOvertookLoadsNoSecondTime: a caller reads Redis and
// misses; before it asks for a load, another caller's load runs, writes
// the row back and ends. The late caller gets that row without calling
// the loader again: its miss is older than the write-back.
func TestAMissThatALoadOvertookLoadsNoSecondTime(t *testing.T) {
	tb := newTable(sample(1, "ada"))
	e := newEnv(t, WithLoader(tb.load))
	v, miss, err := e.c.e.LateLoad(e.ctx, "p:1", func() {
		if got := e.get("p:1"); got.Name != "ada" { // another caller's load, landed
			t.Errorf("Get = %q, want ada", got.Name)
		}
	})
	if v == nil && err == nil {
		t.Fatalf("first read = %v, want a miss", miss)
	}
	if err != nil || v.Name != "ada" {
		t.Fatalf("the late caller's load = %+v, %v; want ada", v, err)
	}
	if n := tb.calls.Load(); n != 1 {
		t.Fatalf("the loader ran %d times for one key, want 1", n)
	}
}

// TestMissesArrivingAsALoadEndsCallTheLoaderOnce: 50 callers miss one key
// at once, unsynchronised, while the loader takes 50 ms; some arrive as
// the load writes back and ends. The loader runs once per key.
func TestMissesArrivingAsALoadEndsCallTheLoaderOnce(t *testing.T) {
	var calls sync.Map // key → *atomic.Int32
	load := func(ctx context.Context, key string) (*profile, error) {
		n, _ := calls.LoadOrStore(key, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		time.Sleep(50 * time.Millisecond) // the database's time, not a wait for an event
		return sample(1, key), nil
	}
	e := newEnv(t, WithLoader(load))
	for round := range 8 {
		key := "p:" + strconv.Itoa(round)
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				if v, err := e.c.Get(e.ctx, key); err != nil || v.Name != key {
					t.Errorf("Get(%s) = %+v, %v", key, v, err)
				}
			})
		}
		wg.Wait()
		if n, _ := calls.Load(key); n.(*atomic.Int32).Load() != 1 {
			t.Errorf("50 misses of %s called the loader %d times, want 1", key, n.(*atomic.Int32).Load())
		}
	}
}

// Concurrent misses of one key call the loader once, even when the
// second miss cannot share the first's load: here the invalidation
// session starts while the first load runs (its node's state moves on),
// so the second caller, who knows the session is live, may not take a
// result read before it. Its load reads Redis, misses, waits for the
// first load to land and reads Redis again, where the first wrote its
// row back. (Found on Valkey 8.1 and Redis 8.0: 50 misses of a new key
// just after New called the loader twice.)
func TestAMissThatCannotShareALoadWaitsForItsWriteBack(t *testing.T) {
	srv := redistest.Start(t)
	tb := newTable(sample(1, "ada"))
	tb.gate = make(chan struct{})
	g := newGatedDialer()
	e := gatedEnv(t, srv, g, true, WithLoader(tb.load), WithAutoPipeline(false))
	first := make(chan error, 1)
	go func() { _, err := e.c.Get(e.ctx, "p:1"); first <- err }()
	waitFor(t, "the first load to call the loader", func() bool { return tb.calls.Load() == 1 })
	load, _ := e.c.e.InFlight("p:1")

	close(g.open) // the session starts while the loader runs
	liveSessions(t, e.c, 1)
	second := make(chan error, 1)
	go func() { _, err := e.c.Get(e.ctx, "p:1"); second <- err }()
	waitFor(t, "the second caller's own load", func() bool {
		f, _ := e.c.e.InFlight("p:1")
		return f.Call != load.Call
	})
	close(tb.gate)
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if n := tb.calls.Load(); n != 1 {
		t.Fatalf("two misses, one across a session's start, called the loader %d times, want 1", n)
	}
}

func TestNullCaching(t *testing.T) {
	tb := newTable()
	e := newEnv(t, WithLoader(tb.load), WithNullTTL(time.Minute))
	for range 5 {
		if _, err := e.c.Get(e.ctx, "p:404"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of an absent row = %v, want ErrNotFound", err)
		}
	}
	if n := tb.calls.Load(); n != 1 {
		t.Fatalf("loader called %d times for one absent row, want 1", n)
	}
	if ttl := e.raw.PTTL(e.ctx, "p:404").Val(); ttl <= 0 || ttl > 63*time.Second {
		t.Fatalf("placeholder TTL %v, want about null_ttl", ttl)
	}
	if err := e.c.Set(e.ctx, "p:404", sample(404, "late")); err != nil {
		t.Fatal(err)
	}
	if got := e.get("p:404"); got.Name != "late" {
		t.Fatalf("after Set got %q", got.Name)
	}
}

func TestNullCachingOff(t *testing.T) {
	tb := newTable()
	e := newEnv(t, WithLoader(tb.load), WithNullTTL(0))
	for range 3 {
		e.c.Get(e.ctx, "p:404")
	}
	if n := tb.calls.Load(); n != 3 {
		t.Fatalf("with null_ttl=0 the loader ran %d times for 3 reads, want 3", n)
	}
	if n := e.raw.Exists(e.ctx, "p:404").Val(); n != 0 {
		t.Fatal("a placeholder was written with null caching off")
	}
	// Hot or not: no absence is kept in memory either, and a present hot
	// key still is.
	for range 200 {
		e.c.Get(e.ctx, "p:404")
	}
	if n := tb.calls.Load(); n != 203 {
		t.Fatalf("with null_ttl=0 the loader ran %d times for 203 reads of a hot absent key, want 203", n)
	}
	e.put("p:1", sample(1, "v1"))
	e.heat("p:1")
}

// TestJitterSpreadsTTLs reads each key's expiry as Redis set it
// (PEXPIRETIME), against when its Set was sent and returned, so a machine
// slow to make the thousand writes ages no TTL.
func TestJitterSpreadsTTLs(t *testing.T) {
	e := newEnv(t, WithTTL(100*time.Second), WithJitter(0.05))
	sent, acked := make([]time.Time, 1000), make([]time.Time, 1000)
	for i := range sent {
		sent[i] = time.Now()
		if err := e.c.Set(e.ctx, "p:"+strconv.Itoa(i), sample(int64(i), "x")); err != nil {
			t.Fatal(err)
		}
		acked[i] = time.Now()
	}
	pipe := e.raw.Pipeline()
	cmds := make([]*redis.IntCmd, len(sent))
	for i := range cmds {
		cmds[i] = redis.NewIntCmd(e.ctx, "PEXPIRETIME", "p:"+strconv.Itoa(i))
		pipe.Process(e.ctx, cmds[i])
	}
	if _, err := pipe.Exec(e.ctx); err != nil {
		t.Fatal(err)
	}
	// Redis set key i's TTL between sent[i] and acked[i]: the TTL it gave
	// is at least expiry - acked and at most expiry - sent, each within a
	// millisecond (Redis's and the test's clock are the machine's). A TTL
	// out of range must be out of range at both ends of what the readings
	// allow, and a spread must be seen whatever they allow.
	const ms = time.Millisecond
	lowest, highest := time.Duration(1<<62), time.Duration(0) // of the most and the least each TTL can be
	for i, c := range cmds {
		at := time.UnixMilli(c.Val())
		least, most := at.Sub(acked[i])-ms, at.Sub(sent[i])+ms
		lowest, highest = min(lowest, most), max(highest, least)
	}
	if lowest < 95*time.Second || highest > 105*time.Second {
		t.Fatalf("TTLs span %v to %v, outside 100s ± 5%%", lowest, highest)
	}
	if lowest > 96*time.Second || highest < 104*time.Second {
		t.Fatalf("TTLs span only %v to %v: not spread", lowest, highest)
	}
}

func TestCorruptValueIsReloaded(t *testing.T) {
	tb := newTable(sample(1, "ada"))
	e := newEnv(t, WithLoader(tb.load))
	e.raw.Set(e.ctx, "p:1", []byte{0xc1}, 0)
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("Get = %q, want the reloaded ada", got.Name)
	}
	var inRedis profile
	b, _ := e.raw.Get(e.ctx, "p:1").Bytes()
	if err := msgpack.Unmarshal(b, &inRedis); err != nil || inRedis.Name != "ada" {
		t.Fatalf("Redis still holds bad bytes: %v", err)
	}
	if st := e.c.Stats(); st.DecodeErrors != 1 || st.Loads != 1 {
		t.Fatalf("DecodeErrors %d Loads %d, want 1 and 1", st.DecodeErrors, st.Loads)
	}
}

// A value of another shape, a whole msgpack map another build wrote, is
// read from the loader but left in place, by Get and GetMany alike: the
// two builds of a deploy must not take turns deleting each other's values.
// Each read of it loads again, and counts a decode error.
func TestAValueOfAnotherShapeIsLoadedButLeftInPlace(t *testing.T) {
	tb := newTable(sample(1, "ada"), sample(2, "bob"))
	e := newEnv(t, WithLoader(tb.load))
	foreign, err := msgpack.Marshal(map[string]any{"ID": 1, "Name": []int{1, 2}, "Color": "red"})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"p:1", "p:2"} {
		if err := e.raw.Set(e.ctx, key, foreign, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if got := e.get("p:1"); got.Name != "ada" {
			t.Fatalf("Get %d = %q, want the loaded ada", i, got.Name)
		}
	}
	vs, err := e.c.GetMany(e.ctx, []string{"p:2"})
	if err != nil || vs[0] == nil || vs[0].Name != "bob" {
		t.Fatalf("GetMany = %v, %v; want the loaded bob", vs, err)
	}
	for _, key := range []string{"p:1", "p:2"} {
		if b, err := e.raw.Get(e.ctx, key).Bytes(); err != nil || !bytes.Equal(b, foreign) {
			t.Errorf("%s holds %q, %v; want the other build's value, untouched", key, b, err)
		}
	}
	if st := e.c.Stats(); st.DecodeErrors != 3 || st.Loads != 3 {
		t.Errorf("DecodeErrors %d, Loads %d; want 3 and 3, one of each a read", st.DecodeErrors, st.Loads)
	}
}

// A value that does not decode is deleted before the loader's row
// replaces it, by Get and GetMany alike; a DEL Redis refuses is counted
// as a Redis error on both paths, and the read still returns the row.
func TestAFailedDeleteOfACorruptValueIsCounted(t *testing.T) {
	srv := redistest.Start(t)
	raw := srv.Client(t)
	ctx := context.Background()
	if err := raw.Do(ctx, "ACL", "SETUSER", "nodel", "on", ">secret", "~*", "&*", "+@all", "-del").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: raw.Options().Addr, Username: "nodel", Password: "secret"})
	t.Cleanup(func() { rdb.Close() })
	tb := newTable(sample(1, "ada"), sample(2, "bob"))
	e := newEnvClient(t, srv, rdb, WithLoader(tb.load))
	for _, key := range []string{"p:1", "p:2"} {
		if err := raw.Set(ctx, key, []byte{0xc1}, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("Get = %q, want the loaded ada", got.Name)
	}
	if st := e.c.Stats(); st.RedisErrors != 1 {
		t.Fatalf("after Get: RedisErrors %d, want 1, the refused DEL", st.RedisErrors)
	}
	vs, err := e.c.GetMany(ctx, []string{"p:2"})
	if err != nil || vs[0] == nil || vs[0].Name != "bob" {
		t.Fatalf("GetMany = %v, %v; want the loaded bob", vs, err)
	}
	if st := e.c.Stats(); st.RedisErrors != 2 || st.DecodeErrors != 2 {
		t.Fatalf("after GetMany: RedisErrors %d, DecodeErrors %d; want 2 and 2", st.RedisErrors, st.DecodeErrors)
	}
}

func TestLoaderErrorsAreWrappedAndNotCached(t *testing.T) {
	boom := errors.New("database down")
	calls := 0
	e := newEnv(t, WithLoader(func(context.Context, string) (*profile, error) { calls++; return nil, boom }))
	for range 2 {
		if _, err := e.c.Get(e.ctx, "p:1"); !errors.Is(err, boom) || errors.Is(err, ErrNotFound) {
			t.Fatalf("Get = %v, want it to wrap the loader's error", err)
		}
	}
	if calls != 2 || e.raw.Exists(e.ctx, "p:1").Val() != 0 {
		t.Fatalf("a failed load was cached (%d calls)", calls)
	}
	if st := e.c.Stats(); st.LoadErrors != 2 {
		t.Fatalf("LoadErrors = %d, want 2", st.LoadErrors)
	}
}

func TestLoaderOfTheWrongTypeIsRejected(t *testing.T) {
	srv := redistest.Start(t)
	_, err := New(srv.Client(t), profileGlue, WithLoader(func(context.Context, int64) (*profile, error) { return nil, nil }))
	if err == nil {
		t.Fatal("a loader keyed by int64 was accepted by a cache keyed by string")
	}
}

// TestStaleWhileError stops Redis under a running cache: the hot key is
// still served, counted as stale once a refresh failed, cold reads fail
// fast, and all recovers when Redis returns.
func TestStaleWhileError(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv, WithRefreshFailures(3))
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")

	srv.Kill()
	e.tick(DefaultRefresh) // one failure: the copy is kept, unverified
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatal("hot key not served while Redis is down")
	}
	_, err := e.c.Get(e.ctx, "p:2")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("cold read with Redis down = %v, want it to fail fast with ErrUnavailable", err)
	}
	if st := e.c.Stats(); st.StaleReads != 1 || st.RefreshErrors != 1 {
		t.Fatalf("StaleReads %d RefreshErrors %d, want 1 and 1", st.StaleReads, st.RefreshErrors)
	}

	srv.Restart(t)
	e.put("p:1", sample(1, "ada v2"))
	e.put("p:2", sample(2, "bob"))
	// A caller retries; Redis is used again within a second, with no
	// restart of the Cache.
	waitFor(t, "cold reads to succeed again", func() bool { _, err := e.c.Get(e.ctx, "p:2"); return err == nil })
	e.tick(DefaultRefresh)
	if got := e.get("p:1"); got.Name != "ada v2" {
		t.Fatalf("after Redis returned the hot key reads %q", got.Name)
	}
	if got := e.get("p:2"); got.Name != "bob" {
		t.Fatalf("after Redis returned a cold read gives %q", got.Name)
	}
	if st := e.c.Stats(); st.StaleReads != 1 {
		t.Fatalf("reads after a good refresh were counted stale: %d", st.StaleReads)
	}
}

// A hot id that does not exist is answered locally too, once Redis holds
// its placeholder: a flood of reads for it reaches neither Redis nor the
// loader.
func TestHotAbsentKeyIsAnsweredLocally(t *testing.T) {
	tb := newTable()
	e := newEnv(t, WithLoader(tb.load))
	for range 101 {
		if _, err := e.c.Get(e.ctx, "p:404"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get = %v, want ErrNotFound", err)
		}
	}
	hook := &cmdCounter{}
	e.c.e.Client().AddHook(hook)
	for range 100 {
		if _, err := e.c.Get(e.ctx, "p:404"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get = %v, want ErrNotFound", err)
		}
	}
	if n := hook.get("get"); n != 0 || tb.calls.Load() != 1 {
		t.Fatalf("100 reads of a hot absent id made %d Redis GETs and %d loads; want 0 and 1 in all", n, tb.calls.Load())
	}
	if err := e.c.Set(e.ctx, "p:404", sample(404, "found")); err != nil {
		t.Fatal(err)
	}
	if got := e.get("p:404"); got.Name != "found" {
		t.Fatalf("after Set got %q", got.Name)
	}
}

// When every refresh of every hot key fails (Redis down, or here values
// that no longer decode), the log says so in one line per
// engine.RefreshLogEvery, counting the refreshes it left out.
func TestRefreshFailuresAreLoggedOncePerInterval(t *testing.T) {
	var logs syncBuffer
	const every = time.Second
	e := newEnv(t, WithRefresh(every), WithRefreshFailures(100), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	for _, k := range []string{"p:1", "p:2", "p:3"} {
		e.put(k, sample(1, k))
		e.heat(k)
		if err := e.raw.Set(e.ctx, k, []byte{0xc1}, 0).Err(); err != nil { // never valid msgpack
			t.Fatal(err)
		}
	}
	refreshes := int(engine.RefreshLogEvery / every) // all within one interval
	for range refreshes {
		e.tick(every)
	}
	lines := logs.linesWith("hotkey: refresh failed")
	if len(lines) != 1 || !strings.Contains(lines[0], "keys=3") {
		t.Fatalf("after %d failed refreshes the log has %d lines about them, want 1 for 3 keys: %q", refreshes, len(lines), lines)
	}
	e.tick(every)
	lines = logs.linesWith("hotkey: refresh failed")
	if want := fmt.Sprintf("unlogged_refreshes=%d", refreshes-1); len(lines) != 2 || !strings.Contains(lines[1], want) {
		t.Fatalf("after the interval: %q, want a second line with %s", lines, want)
	}
}

// stallHook holds every command or pipeline once armed, telling started,
// until its context ends: a Redis slow enough that Close comes first.
type stallHook struct {
	armed   atomic.Bool
	started chan struct{}
	once    sync.Once
}

func (h *stallHook) stall(ctx context.Context) error {
	if !h.armed.Load() {
		return nil
	}
	h.once.Do(func() { close(h.started) })
	<-ctx.Done()
	return ctx.Err()
}

func (h *stallHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *stallHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.stall(ctx); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}
func (h *stallHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.stall(ctx); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// Closing a repository while it refreshes its hot keys cancels the
// refresh, and nothing worth a human's attention happened: no warning.
func TestCloseDuringARefreshWarnsOfNothing(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, WithRefresh(time.Second), WithInvalidate(InvalidateTracking),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	hook := &stallHook{started: make(chan struct{})}
	e.c.e.Client().AddHook(hook)
	hook.armed.Store(true)
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		e.tick(time.Second) // refreshes p:1, held by the hook
	}()
	<-hook.started
	e.c.Close()
	<-ticked
	for _, level := range []string{"level=WARN", "level=ERROR"} {
		if lines := logs.linesWith(level); len(lines) != 0 {
			t.Errorf("Close during a refresh logged %q", lines)
		}
	}
}
