package runtime

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"
	"go.uber.org/goleak"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

func TestColdReadThrough(t *testing.T) {
	e := newEnv(t)
	want := sample(1, "ada")
	e.put("p:1", want)
	if got := e.get("p:1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Get = %+v, want %+v", got, want)
	}
	_, err := e.c.Get(e.ctx, "p:2")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key = %v, want ErrNotFound", err)
	}
	st := e.c.Stats()
	if st.Reads != 2 || st.HotAccesses != 0 || st.LocalSize != 0 || st.RedisErrors != 0 {
		t.Fatalf("cold reads stored or counted wrongly: %+v", st)
	}
}

func TestHotKeyServedLocally(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	e.put("p:1", sample(1, "changed behind our back"))
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("hot read went to Redis: got %q", got.Name)
	}
	st := e.c.Stats()
	// The 100th read promoted the key and missed; the next two hit.
	if st.Misses != 1 || st.Hits != 2 || st.HotAccesses != 3 || st.Reads != 102 {
		t.Fatalf("stats after 99 cold reads, 1 miss, 2 hits: %+v", st)
	}
	if st.LocalSize != 1 || st.RegistrySize != 1 || len(st.HotKeys) != 1 || st.HotKeys[0].Key != "p:1" {
		t.Fatalf("local state: %+v", st)
	}
	if st.HitRate != 2.0/3 || st.TrafficShare != 3.0/102 {
		t.Fatalf("HitRate %v TrafficShare %v", st.HitRate, st.TrafficShare)
	}
}

func TestHotKeyStatsCountHitsAndBytes(t *testing.T) {
	e := newEnv(t)
	v := sample(1, "ada")
	e.put("p:1", v)
	e.heat("p:1")
	const hits = 1600
	for range hits {
		e.get("p:1")
	}
	st := e.c.Stats()
	// Hits are sampled one in 16: 100 samples expected, 5 standard
	// deviations either side is 800..2400.
	if got := st.HotKeys[0].Hits; got < hits/2 || got > hits*3/2 {
		t.Fatalf("HotKey.Hits = %d after %d local hits", got, hits)
	}
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if st.LocalBytes != int64(len(b)) {
		t.Fatalf("LocalBytes = %d, want the encoded size %d", st.LocalBytes, len(b))
	}
}

func TestWritesVisibleOnHotKey(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")

	if err := e.c.Set(e.ctx, "p:1", sample(1, "grace")); err != nil {
		t.Fatal(err)
	}
	if got := e.get("p:1"); got.Name != "grace" {
		t.Fatalf("read after own write = %q, want grace", got.Name)
	}
	var inRedis profile
	b, _ := e.raw.Get(e.ctx, "p:1").Bytes()
	if err := msgpack.Unmarshal(b, &inRedis); err != nil || inRedis.Name != "grace" {
		t.Fatalf("Redis holds %+v (%v), want grace", inRedis, err)
	}
	if st := e.c.Stats(); st.Misses != 1 {
		t.Fatalf("the write's value was not put in the local store: %d misses", st.Misses)
	}

	if err := e.c.Del(e.ctx, "p:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Get(e.ctx, "p:1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read after delete = %v, want ErrNotFound", err)
	}
	if n := e.raw.Exists(e.ctx, "p:1").Val(); n != 0 {
		t.Fatal("Del left the key in Redis")
	}
}

func TestSetAppliesTTL(t *testing.T) {
	e := newEnv(t, WithTTL(30*time.Minute), WithJitter(0))
	if err := e.c.Set(e.ctx, "p:1", sample(1, "ada")); err != nil {
		t.Fatal(err)
	}
	if ttl := e.raw.TTL(e.ctx, "p:1").Val(); ttl <= 29*time.Minute || ttl > 30*time.Minute {
		t.Fatalf("TTL in Redis = %v, want 30m", ttl)
	}
}

func TestSetOfNilIsAnError(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	if err := e.c.Set(e.ctx, "p:1", nil); err == nil {
		t.Fatal("Set(nil) succeeded; it must ask for Del")
	}
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("Set(nil) changed the stored value: %+v", got)
	}
}

func TestRefreshPicksUpChanges(t *testing.T) {
	e := newEnv(t, WithRefresh(10*time.Second))
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	e.put("p:1", sample(1, "grace"))
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("before refresh got %q, want the local ada", got.Name)
	}
	e.tick(9 * time.Second)
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatal("refreshed before the interval")
	}
	e.tick(time.Second)
	if got := e.get("p:1"); got.Name != "grace" {
		t.Fatalf("after refresh got %q, want grace", got.Name)
	}
	if st := e.c.Stats(); st.Refreshes != 1 || st.Hits < 3 {
		t.Fatalf("refresh not counted or value not served locally: %+v", st)
	}
}

func TestRefreshDropsKeyDeletedInRedis(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	e.raw.Del(e.ctx, "p:1")
	e.tick(DefaultRefresh)
	if st := e.c.Stats(); st.LocalSize != 0 || st.RegistrySize != 0 {
		t.Fatalf("deleted key still held: local %d registry %d", st.LocalSize, st.RegistrySize)
	}
	if _, err := e.c.Get(e.ctx, "p:1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get = %v, want ErrNotFound", err)
	}
}

// A reload that fails leaves the copy unverified: it is not served while
// Redis answers (here with bytes that do not decode), kept for an outage,
// and dropped after RefreshFailures failures in a row.
func TestRefreshFailuresDropLocalCopy(t *testing.T) {
	e := newEnv(t, WithRefreshFailures(3))
	e.put("p:bad", sample(1, "ada"))
	e.put("p:good", sample(2, "bob"))
	e.heat("p:bad")
	e.heat("p:good")
	e.raw.Set(e.ctx, "p:bad", []byte{0xc1}, 0) // 0xc1 is never valid msgpack
	e.put("p:good", sample(2, "bob v2"))

	for i := 1; i <= 2; i++ {
		e.tick(DefaultRefresh)
		if _, err := e.c.Get(e.ctx, "p:bad"); !errors.Is(err, ErrDecode) {
			t.Fatalf("after %d failed refreshes Get = %v, want ErrDecode from Redis, not the old copy", i, err)
		}
		if !holds(e.c.e, "p:bad") {
			t.Fatalf("after %d failures the local copy is gone", i)
		}
		if got := e.get("p:good"); got.Name != "bob v2" {
			t.Fatalf("one key's failure stopped the refresh of another: got %q", got.Name)
		}
	}
	e.tick(DefaultRefresh)
	if holds(e.c.e, "p:bad") {
		t.Fatal("the copy outlived 3 failed refreshes")
	}
	st := e.c.Stats()
	if st.RefreshErrors != 3 || st.DecodeErrors != 5 || st.Refreshes != 3 {
		t.Fatalf("RefreshErrors %d DecodeErrors %d Refreshes %d; want 3, 5, 3", st.RefreshErrors, st.DecodeErrors, st.Refreshes)
	}
}

func TestClonesProtectLocalCopy(t *testing.T) {
	e := newEnv(t)
	want := sample(1, "ada")
	e.put("p:1", want)
	e.heat("p:1")

	got := e.get("p:1")
	got.Name = "mallory"
	got.Tags[0] = "x"
	got.Attrs["x"] = "2"
	got.Best.Name = "eve"
	if again := e.get("p:1"); !reflect.DeepEqual(again, want) {
		t.Fatalf("a caller's change reached the next caller: %+v", again)
	}

	v := sample(1, "grace")
	if err := e.c.Set(e.ctx, "p:1", v); err != nil {
		t.Fatal(err)
	}
	v.Tags[0] = "changed after Set"
	if again := e.get("p:1"); again.Tags[0] != "a" {
		t.Fatal("changing the value passed to Set changed the local copy")
	}
}

func TestCorruptValueIsAnErrorNotAPanic(t *testing.T) {
	e := newEnv(t)
	for i, b := range [][]byte{{0xc1}, {0x93, 0x01}, []byte("plain text"), {}} {
		key := "p:" + strconv.Itoa(i)
		e.raw.Set(e.ctx, key, b, 0)
		if _, err := e.c.Get(e.ctx, key); !errors.Is(err, ErrDecode) {
			t.Errorf("Get of %q = %v, want ErrDecode", b, err)
		}
	}
}

func TestRedisErrorsAreWrappedAndCounted(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	c, err := New(rdb, profileGlue, WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rdb.Close()
	_, err = c.Get(context.Background(), "p:1")
	if !errors.Is(err, redis.ErrClosed) || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on a closed client = %v, want it to wrap redis.ErrClosed", err)
	}
	if err := c.Set(context.Background(), "p:1", sample(1, "a")); !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("Set = %v", err)
	}
	if st := c.Stats(); st.RedisErrors != 2 {
		t.Fatalf("RedisErrors = %d, want 2", st.RedisErrors)
	}
}

// A caller that gives up is no Redis error: a call whose context was
// cancelled, or whose deadline passed while Redis hung, leaves
// RedisErrors, and so Prometheus and the live page, which read it, where
// they were; a server that is gone still counts. (Issue 21, finding 5: 20
// reads with an expired context counted 19 Redis errors.)
func TestACallerGivingUpIsNoRedisError(t *testing.T) {
	calls := []struct {
		name string
		do   func(ctx context.Context, c *Cache[string, profile]) error
	}{
		{"Get of a cold key", func(ctx context.Context, c *Cache[string, profile]) error { _, err := c.Get(ctx, "p:1"); return err }},
		{"GetMany", func(ctx context.Context, c *Cache[string, profile]) error {
			_, err := c.GetMany(ctx, []string{"p:1", "p:2"})
			return err
		}},
		{"Set", func(ctx context.Context, c *Cache[string, profile]) error { return c.Set(ctx, "p:1", sample(1, "ada")) }},
		{"Del", func(ctx context.Context, c *Cache[string, profile]) error { return c.Del(ctx, "p:1") }},
	}
	cancelled := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	expiring := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 50*time.Millisecond)
	}
	live := func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
	ends := []struct {
		name        string
		redis       func(t *testing.T, srv *redistest.Server)
		ctx         func() (context.Context, context.CancelFunc)
		redisErrors uint64
	}{
		{"with a context cancelled before the call", func(*testing.T, *redistest.Server) {}, cancelled, 0},
		{"with a deadline that passes while Redis hangs", func(t *testing.T, srv *redistest.Server) { srv.Hang(t) }, expiring, 0},
		{"on a server that was killed", func(_ *testing.T, srv *redistest.Server) { srv.Kill() }, live, 1},
	}
	for _, end := range ends {
		for _, call := range calls {
			t.Run(call.name+" "+end.name, func(t *testing.T) {
				srv := redistest.Start(t)
				// A read's deadline is its context's, not the client's
				// 3 s read timeout, and a failed command is not retried:
				// the call fails with the read's timeout, which go-redis
				// would otherwise replace with the context's error
				// before a retry.
				rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
				t.Cleanup(func() { rdb.Close() })
				e := newEnvClient(t, srv, rdb)
				if err := rdb.Ping(e.ctx).Err(); err != nil { // a connection in the pool, before Redis hangs
					t.Fatal(err)
				}
				end.redis(t, srv)
				ctx, cancel := end.ctx()
				defer cancel()
				if err := call.do(ctx, e.c); err == nil {
					t.Fatal("the call succeeded")
				}
				// A call on a killed server fails on its command, or is
				// refused once the breaker opened while it waited: either
				// is Redis failing.
				st := e.c.Stats()
				if got := min(st.RedisErrors+st.FailedFast, 1); got != end.redisErrors || st.RedisErrors > end.redisErrors {
					t.Errorf("RedisErrors = %d, FailedFast = %d; want %d failure counted", st.RedisErrors, st.FailedFast, end.redisErrors)
				}
			})
		}
	}
}

// A batch loader that outlasts its caller's context still answers the
// read; the write-back of its rows, refused for the ended context, is no
// Redis error, and nothing is logged about it.
func TestAWriteBackAfterTheCallerGaveUpIsNoRedisError(t *testing.T) {
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := newEnv(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		WithBatchLoader(func(_ context.Context, ks []string) (map[string]*profile, error) {
			cancel() // the caller gives up while the database answers
			return map[string]*profile{"p:1": sample(1, "ada")}, nil
		}))
	got, err := e.c.GetMany(ctx, []string{"p:1"})
	if err != nil || got[0] == nil || got[0].Name != "ada" {
		t.Fatalf("GetMany = %+v, %v; want the loaded row", got, err)
	}
	if st := e.c.Stats(); st.RedisErrors != 0 {
		t.Errorf("RedisErrors = %d, want 0", st.RedisErrors)
	}
	if lines := logs.linesWith("write-back failed"); len(lines) != 0 {
		t.Errorf("logged %q", lines)
	}
}

func TestConcurrentReadsAndWritesEndConsistent(t *testing.T) {
	e := newEnv(t)
	e.put("p:1", sample(0, "v0"))
	e.heat("p:1")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 50 {
				e.c.Set(e.ctx, "p:1", sample(int64(i), "w"+strconv.Itoa(w)))
			}
		}()
		go func() {
			defer wg.Done()
			for range 500 {
				if _, err := e.c.Get(e.ctx, "p:1"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var inRedis profile
	b, _ := e.raw.Get(e.ctx, "p:1").Bytes()
	msgpack.Unmarshal(b, &inRedis)
	if got := e.get("p:1"); !reflect.DeepEqual(got, &inRedis) {
		t.Fatalf("after the writes settle, local %+v differs from Redis %+v", got, inRedis)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var ce *ConfigError
	if _, err := New(rdb, profileGlue, WithHotQPS(100), WithWarmQPS(5000)); !errors.As(err, &ce) || ce.Option != "warm_qps" {
		t.Fatalf("New with warm above hot = %v", err)
	}
	if _, err := New(rdb, Glue[string, profile]{Key: ident}); err == nil {
		t.Fatal("New without a clone function succeeded")
	}
	if _, err := New(nil, profileGlue); err == nil {
		t.Fatal("New without a client succeeded")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustNew with invalid options did not panic")
		}
	}()
	MustNew(rdb, profileGlue, WithTopN(0))
}

// Close stops every goroutine the Cache started but the client's
// automatic pipeline, which the client owns and its Close stops.
func TestCloseStopsEverything(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	before := goleak.IgnoreCurrent()
	c, err := New(rdb, profileGlue, WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	c.Set(context.Background(), "p:1", sample(1, "a"))
	if _, err := c.Get(context.Background(), "p:1"); err != nil {
		t.Fatal(err) // on the client's automatic pipeline
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("github.com/redis/go-redis/v9.(*apShard).flusher"))
	rdb.Close()
	goleak.VerifyNone(t, before)
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := c.Get(context.Background(), "p:1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close = %v, want ErrClosed", err)
	}
}

// TestWallClockDrivesBackgroundWork runs the real ticker: a key read fast
// becomes hot and, once its reads stop, is demoted.
func TestWallClockDrivesBackgroundWork(t *testing.T) {
	srv := redistest.Start(t)
	c, err := New(srv.Client(t), profileGlue, WithLogger(quiet),
		WithWindow(200*time.Millisecond), WithPromoteEvery(20*time.Millisecond), WithDemoteEvery(20*time.Millisecond),
		WithRefresh(20*time.Millisecond), WithHotQPS(200), WithWarmQPS(100))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	c.Set(ctx, "p:1", sample(1, "a"))
	deadline := time.Now().Add(10 * time.Second)
	for st := c.Stats(); st.Hits == 0 || st.Refreshes == 0; st = c.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("never served locally and refreshed: %+v", st)
		}
		c.Get(ctx, "p:1")
	}
	for c.Stats().Demotions == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("never demoted after reads stopped: %+v", c.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := c.Stats(); st.LocalSize != 0 || len(st.HotKeys) != 0 {
		t.Fatalf("after demotion: %+v", st)
	}
}

func TestStatsRatesAndMonitorLine(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	e := newEnv(t, WithLogger(logger), WithMonitorEvery(time.Minute))
	e.put("p:1", sample(1, "ada"))
	for i := range 50 {
		e.c.Get(e.ctx, "p:"+strconv.Itoa(i%5)) // 5 distinct keys, 4 of them missing
	}
	e.tick(time.Second)
	st := e.c.Stats()
	if st.ReadsPerSec != 5 {
		t.Fatalf("ReadsPerSec = %v after 50 reads in the first second, want 50/10s = 5", st.ReadsPerSec)
	}
	if st.DistinctKeysPerSec != 5 {
		t.Fatalf("DistinctKeysPerSec = %v, want 5", st.DistinctKeysPerSec)
	}
	if strings.Contains(logs.String(), "hotkey: stats") {
		t.Fatal("monitor logged before its interval")
	}
	e.tick(59 * time.Second)
	line := logs.String()
	for _, want := range []string{"hotkey: stats", "entity=profile", "reads/s=", "hot=0", "hit_rate=", "share=", "local=0"} {
		if !strings.Contains(line, want) {
			t.Errorf("monitor line %q lacks %q", line, want)
		}
	}
}

// A key too long for detection to track (issue 50: 1 MiB, read 5,200
// times, never promoted, and nothing said) is counted in Stats and
// logged once, with the longest name it would track; a key of that
// length becomes hot as any other.
func TestAKeyTooLongToTrackIsSaidOnce(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	longest := e.c.e.Detector().Rec.LongestName()
	if longest != 13_232 {
		t.Fatalf("the longest name tracked at the default recorder_size is %d bytes, want 13,232 (Stats.KeysTooLong's doc)", longest)
	}
	tooLong := "p:" + strings.Repeat("x", longest-1)
	e.put(tooLong, sample(1, "long"))
	for range 2 {
		for range 200 {
			e.get(tooLong)
		}
		e.tick(time.Second)
	}
	st := e.c.Stats()
	if st.KeysTooLong == 0 || len(st.HotKeys) != 0 {
		t.Fatalf("a key of %d bytes read 400 times: KeysTooLong %d, hot %v; want counted, not hot", len(tooLong), st.KeysTooLong, st.HotKeys)
	}
	if n := strings.Count(logs.String(), "a key too long to track"); n != 1 || !strings.Contains(logs.String(), "longest_tracked_bytes=13232") {
		t.Fatalf("logged %d times, want once with the longest name tracked:\n%s", n, logs.String())
	}
	fits := "p:" + strings.Repeat("y", longest-2)
	e.put(fits, sample(2, "fits"))
	e.heat(fits)
}

func TestPromotionAndDemotionAreLogged(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	e.put("p:1", sample(1, "ada"))
	e.heat("p:1")
	e.tick(DefaultDemoteEvery)
	out := logs.String()
	for _, want := range []string{`msg="hotkey: promoted" entity=profile key=p:1 qps=100`, `msg="hotkey: demoted" entity=profile key=p:1`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if st := e.c.Stats(); st.Demotions != 1 || st.LocalSize != 0 {
		t.Fatalf("after cooling: %+v", st)
	}
}

// Tuning one threshold is enough: the thresholds that depend on it follow,
// at run time as in an annotation, and the key still goes hot and cools.
func TestNewWithOneThresholdOnly(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, err := New(rdb, profileGlue, WithHotQPS(100))
	if err != nil {
		t.Fatalf("New with hot_qps=100 alone: %v", err)
	}
	defer c.Close()
	if c.e.Config().WarmQPS != 100.0/WarmRatio {
		t.Fatalf("warm_qps = %v, want hot_qps / %d", c.e.Config().WarmQPS, WarmRatio)
	}
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testConfig is DefaultConfig changed by opts.
func testConfig(opts ...Option) Config {
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// View reads as Get does, but lends the value: a hot key's copy itself,
// with no allocation whatever its size, and a cold key's value as read.
// An absent key is ErrNotFound without a call of fn, and fn's error is
// View's.
func TestViewLendsWhatGetWouldCopy(t *testing.T) {
	e := newEnv(t, WithHotQPS(100), WithWarmQPS(10))
	e.put("p:hot", &profile{ID: 1, Name: "ada", Tags: []string{"a", "b"}, Attrs: map[string]string{"k": "v"}})
	e.put("p:cold", &profile{ID: 2, Name: "bob"})
	e.heat("p:hot")

	var lent *profile
	view := func(p *profile) error { lent = p; return nil }
	for _, key := range []string{"p:hot", "p:cold"} {
		if err := e.c.View(e.ctx, key, view); err != nil {
			t.Fatalf("View(%q): %v", key, err)
		}
		if got := e.get(key); !reflect.DeepEqual(lent, got) {
			t.Errorf("View(%q) lent %+v, Get returns %+v", key, lent, got)
		}
	}
	// The local store's own lookup is what a lent read may cost: theine
	// may allocate in its access buffer.
	store := testing.AllocsPerRun(100, func() { e.c.e.Copies().Local.Get("p:hot") })
	if allocs := testing.AllocsPerRun(100, func() {
		if err := e.c.View(e.ctx, "p:hot", view); err != nil {
			t.Fatal(err)
		}
	}); allocs != store {
		t.Errorf("a hot View allocates %v times, the store's lookup %v: it copied the value", allocs, store)
	}
	if allocs := testing.AllocsPerRun(100, func() { e.get("p:hot") }); allocs <= store {
		t.Errorf("a hot Get allocates %v times, the store's lookup %v: the measure above proves nothing", allocs, store)
	}

	called := false
	if err := e.c.View(e.ctx, "p:absent", func(*profile) error { called = true; return nil }); !errors.Is(err, ErrNotFound) || called {
		t.Errorf("View of an absent key = %v, fn called %v; want ErrNotFound, not called", err, called)
	}
	boom := errors.New("boom")
	if err := e.c.View(e.ctx, "p:hot", func(*profile) error { return boom }); err != boom {
		t.Errorf("View = %v, want fn's error itself", err)
	}
}
