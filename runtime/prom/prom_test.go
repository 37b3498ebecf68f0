package prom_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/config"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
	"github.com/hotkeygen/hotkeygen/runtime/prom"
)

func TestMain(m *testing.M) {
	redistest.Main(exampleRedis{m}) // the examples' server, go-redis's log off, no goroutine left
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// item is the value of the test caches, keyed by its Redis key itself.
type item struct{ Name string }

func cloneItem(v *item) *item { c := *v; return &c }

// env is a Cache on a private Redis with a manual clock that never moves,
// so every read falls in one detection slot: with hot_qps 100, the 100th
// read of a key promotes it at 100 reads/s.
type env struct {
	t   *testing.T
	srv *redistest.Server
	raw *redis.Client
	c   *runtime.Cache[string, item]
	ctx context.Context
}

func newEnv(t *testing.T, entity string, opts ...runtime.Option) *env {
	t.Helper()
	srv := redistest.Start(t)
	base := []runtime.Option{
		runtime.WithEntity(entity),
		onClock(fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))),
		runtime.WithLogger(quiet),
		runtime.WithHotQPS(100), runtime.WithWarmQPS(10),
		runtime.WithInvalidate(runtime.InvalidateOff),
	}
	glue := runtime.Glue[string, item]{Key: func(k string) string { return k }, Clone: cloneItem, Prefix: entity + ":"}
	// No retries: a test that stops Redis sees each read fail at once.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	c, err := runtime.New(rdb, glue, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &env{t: t, srv: srv, raw: srv.Client(t), c: c, ctx: context.Background()}
}

func (e *env) put(key, name string) {
	e.t.Helper()
	b, err := msgpack.Marshal(&item{Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.raw.Set(e.ctx, key, b, 0).Err(); err != nil {
		e.t.Fatal(err)
	}
}

// read reads key n times and fails the test on any error.
func (e *env) read(key string, n int) {
	e.t.Helper()
	for range n {
		if _, err := e.c.Get(e.ctx, key); err != nil {
			e.t.Fatalf("Get(%q): %v", key, err)
		}
	}
}

// heat reads key 101 times: 99 cold reads, the 100th promotes the key and
// misses, the 101st hits.
func (e *env) heat(key string) {
	e.t.Helper()
	e.read(key, 101)
	if st := e.c.Stats(); len(st.HotKeys) == 0 || st.HotKeys[0].Key != key {
		e.t.Fatalf("%q not hot after 101 reads: %+v", key, st)
	}
}

func collector(t *testing.T, sources []prom.Source, opts ...prom.Option) *prom.Collector {
	t.Helper()
	c, err := prom.NewCollector(sources, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func compare(t *testing.T, c prometheus.Collector, want string, names ...string) {
	t.Helper()
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}

// family is one metric every entity has, as the exposition shows it.
type family struct{ name, typ, help string }

// families are the metrics of every entity, in the exposition's order.
var families = []family{
	{"hotkeygen_aggregate_errors_total", "counter", "Cluster-wide detection reports and readings that failed; reads are never affected."},
	{"hotkeygen_aggregate_reports_total", "counter", "Slots whose busiest keys this instance reported to cluster-wide detection."},
	{"hotkeygen_big_values_total", "counter", "Reads and writes of values larger than max_value_bytes."},
	{"hotkeygen_bloom_absent_total", "counter", "Reads the Bloom filter answered as absent, without a load or a placeholder."},
	{"hotkeygen_bloom_adds_total", "counter", "Ids added to the Bloom filter by writes, loads, syncs and warming."},
	{"hotkeygen_bloom_checks_total", "counter", "Reads that missed Redis and asked the Bloom filter (bloom=on)."},
	{"hotkeygen_bloom_errors_total", "counter", "Bloom filter checks and additions that Redis failed; a failed check lets the read through."},
	{"hotkeygen_bloom_unready_total", "counter", "Reads let through because the Bloom filter was not warmed, or lost its bits."},
	{"hotkeygen_changes_claims_expired_total", "counter", "Changed ids whose claim lapsed, because the worker holding it died or stalled past sync_lease, and that went back to the buffer."},
	{"hotkeygen_changes_dropped_total", "counter", "Change-buffer members that were not ids of the entity, dropped."},
	{"hotkeygen_changes_oldest_age_seconds", "gauge", "How long the oldest id waiting in the change buffer has waited since it was marked."},
	{"hotkeygen_changes_pending", "gauge", "Ids waiting in the change buffer, as this instance's sync worker last saw it (changes=on)."},
	{"hotkeygen_changes_sync_failures_total", "counter", "Batches of changed ids whose sync failed (loader, Redis or sync hook) and went back to the buffer."},
	{"hotkeygen_changes_synced_total", "counter", "Changed ids this instance synced to Redis and acknowledged; its rate is the ids synced per second."},
	{"hotkeygen_decode_errors_total", "counter", "Values read from Redis that did not decode as the entity's version: bytes another build of that version wrote (a struct changed without version=), or corrupt ones."},
	{"hotkeygen_degraded_loads_total", "counter", "Loader calls made because Redis failed (degrade=loader)."},
	{"hotkeygen_demotions_total", "counter", "Hot keys that cooled below warm_qps and went back to Redis."},
	{"hotkeygen_failed_fast_total", "counter", "Calls refused without asking Redis, because a recent call found it unreachable."},
	{"hotkeygen_hits_total", "counter", "Reads of hot keys answered from the in-process copy, without a Redis round trip."},
	{"hotkeygen_hot_keys", "gauge", "Keys hot now, served from memory."},
	{"hotkeygen_hot_reads_total", "counter", "Reads of keys that were hot when read; the other reads went straight to Redis."},
	{"hotkeygen_info", "gauge", "Always 1: which instance this is (host name and process id), the version of the entity's values it reads (version=) and the invalidation mode in effect (tracking, pubsub, pubsub-keys, off)."},
	{"hotkeygen_invalidation_connected", "gauge", "1 while the invalidation session of every node copies are kept of is live, so writes made anywhere reach the local copies; 0 while one is lost or connecting, and with invalidate=off."},
	{"hotkeygen_invalidation_connections", "gauge", "Invalidation subscriptions up now: one per node copies of whose keys are kept; 0 with none kept, with invalidate=off, and while a lost one is being re-established."},
	{"hotkeygen_invalidation_down_since_seconds", "gauge", "Unix time an invalidation session was lost (or a node's first copy wanted one, while it connects); 0 while connected, and with invalidate=off."},
	{"hotkeygen_invalidation_resets_total", "counter", "Losses of an invalidation session; until the next one starts, local copies are read from Redis again."},
	{"hotkeygen_invalidations_total", "counter", "Local copies dropped because their key was written, by this instance or anyone else."},
	{"hotkeygen_keys_too_long_total", "counter", "Times a key read often enough to be tracked was refused because its name alone is too long for detection: it never becomes hot."},
	{"hotkeygen_load_errors_total", "counter", "Loader calls that failed."},
	{"hotkeygen_loads_total", "counter", "Calls of the loader, the source of truth behind Redis."},
	{"hotkeygen_local_bytes", "gauge", "Encoded size of the values held in the in-process cache: what they take in Redis, a lower bound of their memory."},
	{"hotkeygen_local_entries", "gauge", "Values held in the in-process cache."},
	{"hotkeygen_misses_total", "counter", "Reads of hot keys that went to Redis because no local copy could be served: none was held, or no live invalidation session vouched for it."},
	{"hotkeygen_promotions_total", "counter", "Keys that became hot and started being served from memory."},
	{"hotkeygen_reads_total", "counter", "Reads of the entity's keys, served locally or from Redis."},
	{"hotkeygen_redis_down_since_seconds", "gauge", "Unix time Redis was found unreachable, since when hot keys are served from memory and other calls fail fast; 0 while it answers."},
	{"hotkeygen_recorder_keys", "gauge", "Keys hot-key detection tracks by name, the candidates for hot, at most recorder_size; every other key is counted by hash."},
	{"hotkeygen_redis_errors_total", "counter", "Redis commands that failed (an absent key is not a failure, nor a caller's context ending)."},
	{"hotkeygen_refresh_errors_total", "counter", "Background reloads of hot keys that failed; after refresh_failures in a row a key's local copy is dropped."},
	{"hotkeygen_refreshes_total", "counter", "Background reloads of hot keys from Redis that succeeded."},
	{"hotkeygen_stale_reads_total", "counter", "Reads answered from a local copy no live invalidation session vouched for, because Redis could not be reached."},
}

// exposition is the expected text of every series of families for the
// entities values names: each series is 0 unless values gives it a value.
// hotkeygen_info's labels are given as its value, "host pid invalidation";
// by default this process's, with invalidate=off. The pseudo-name
// "version" gives the version label of the versioned series, 1 by default.
func exposition(values map[string]map[string]string) string {
	entities := slices.Sorted(maps.Keys(values))
	var b strings.Builder
	for _, f := range families {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for _, e := range entities {
			v, ok := values[e][f.name]
			version := cmp.Or(values[e]["version"], "1")
			if f.name == "hotkeygen_info" {
				if !ok {
					v = thisInstance("off")
				}
				l := strings.Fields(v)
				fmt.Fprintf(&b, "%s{entity=%q,host=%q,invalidation=%q,pid=%q,version=%q} 1\n", f.name, e, l[0], l[2], l[1], version)
				continue
			}
			if !ok {
				v = "0"
			}
			if f.name == "hotkeygen_decode_errors_total" {
				fmt.Fprintf(&b, "%s{entity=%q,version=%q} %s\n", f.name, e, version, v)
				continue
			}
			fmt.Fprintf(&b, "%s{entity=%q} %s\n", f.name, e, v)
		}
	}
	for e, vs := range values {
		for name := range vs {
			if name != "version" && !slices.ContainsFunc(families, func(f family) bool { return f.name == name }) {
				panic(fmt.Sprintf("no metric %s (entity %s)", name, e))
			}
		}
	}
	return b.String()
}

// thisInstance is the value of hotkeygen_info for exposition: this
// process's host and id, and the invalidation mode.
func thisInstance(invalidation string) string {
	host, err := os.Hostname()
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%s %d %s", host, os.Getpid(), invalidation)
}

func TestCollectorCountsReadsOfRealCaches(t *testing.T) {
	a := newEnv(t, "account")
	a.put("account:1", "ada")
	a.heat("account:1")
	a.read("account:1", 4) // 4 more hits
	a.put("account:2", "bob")
	a.read("account:2", 3) // cold
	if _, err := a.c.Get(a.ctx, "account:3"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get of an absent key = %v, want ErrNotFound", err)
	}
	if err := a.raw.Set(a.ctx, "account:4", "not msgpack", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.Get(a.ctx, "account:4"); !errors.Is(err, runtime.ErrDecode) {
		t.Fatalf("Get of foreign bytes = %v, want ErrDecode", err)
	}

	rows := map[string]*item{"invoice:1": {Name: "first"}}
	b := newEnv(t, "invoice", runtime.WithLoader(func(_ context.Context, k string) (*item, error) {
		if v, ok := rows[k]; ok {
			return v, nil
		}
		return nil, runtime.ErrNotFound
	}))
	b.read("invoice:1", 2) // loaded once, then read from Redis
	if _, err := b.c.Get(b.ctx, "invoice:2"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get of an absent row = %v, want ErrNotFound", err)
	}

	// account:1 is the one value held locally.
	localBytes := len(mustMarshal(t, &item{Name: "ada"}))
	want := exposition(map[string]map[string]string{"account": {
		// 101+4 of account:1, 3 of account:2, one of account:3 and of account:4
		"hotkeygen_reads_total":         "110",
		"hotkeygen_hot_reads_total":     "6",
		"hotkeygen_hits_total":          "5",
		"hotkeygen_misses_total":        "1",
		"hotkeygen_promotions_total":    "1",
		"hotkeygen_decode_errors_total": "1",
		"hotkeygen_hot_keys":            "1",
		"hotkeygen_local_entries":       "1",
		"hotkeygen_local_bytes":         strconv.Itoa(localBytes),
		// Only account:1 reached warm_qps/2 = 5 reads in a slot and is
		// tracked by name; the others are counted by hash.
		"hotkeygen_recorder_keys": "1",
	}, "invoice": {
		"hotkeygen_reads_total":   "3",
		"hotkeygen_loads_total":   "2", // invoice:1, and invoice:2 found absent
		"hotkeygen_recorder_keys": "0",
	}})
	// Without WithHotKeyQPS, no series has a key label: comparing every
	// series the Collector sends proves there is no other.
	compare(t, collector(t, []prom.Source{a.c, b.c}), want)
}

func TestRedisErrorsCountedWhileHotKeysServeLocally(t *testing.T) {
	e := newEnv(t, "account")
	e.put("account:1", "ada")
	e.heat("account:1")
	e.srv.Kill()
	e.read("account:1", 2) // local: unaffected by Redis being down
	for i := range 3 {
		_, err := e.c.Get(e.ctx, "account:2")
		if err == nil || errors.Is(err, runtime.ErrNotFound) || i > 0 && !errors.Is(err, runtime.ErrUnavailable) {
			t.Fatalf("cold Get %d with Redis down = %v, want the client's error, then ErrUnavailable", i, err)
		}
	}
	names := []string{"hotkeygen_reads_total", "hotkeygen_hits_total", "hotkeygen_redis_errors_total", "hotkeygen_failed_fast_total", "hotkeygen_hot_keys"}
	want := exposition(map[string]map[string]string{"account": {
		"hotkeygen_reads_total":        "106",
		"hotkeygen_hits_total":         "3",
		"hotkeygen_redis_errors_total": "1",
		"hotkeygen_failed_fast_total":  "2",
		"hotkeygen_hot_keys":           "1",
	}})
	compare(t, collector(t, []prom.Source{e.c}), want, names...)
}

func TestHotKeyQPSOnlyForHotKeysWhenAskedFor(t *testing.T) {
	e := newEnv(t, "account")
	e.put("account:1", "ada")
	e.put("account:2", "bob")
	// 100 reads promote account:1 and none is served locally: local hits
	// are counted one in 16, weighted 16, which would make the rate below
	// 100 or 116 by chance.
	e.read("account:1", 100)
	e.read("account:2", 50) // read, tracked, not hot
	const name = "hotkeygen_hot_key_qps"

	// 100 reads in the slot before promotion: a burst of 100 reads/s.
	compare(t, collector(t, []prom.Source{e.c}, prom.WithHotKeyQPS()), `
# HELP hotkeygen_hot_key_qps Reads per second of a key hot now, on this instance: over the detection window, or its busiest recent slot when higher.
# TYPE hotkeygen_hot_key_qps gauge
hotkeygen_hot_key_qps{entity="account",key="account:1"} 100
`, name)
	if n := testutil.CollectAndCount(collector(t, []prom.Source{e.c}), name); n != 0 {
		t.Fatalf("%d %s series without WithHotKeyQPS, want none", n, name)
	}
}

func TestGeneratedReposAreSources(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	users := userstore.MustNewUserRepo(rdb, runtime.WithLogger(quiet))
	defer users.Close()
	orders := userstore.MustNewOrderRepo(rdb, runtime.WithLogger(quiet))
	defer orders.Close()
	ctx := context.Background()
	if err := users.SetUser(ctx, &userstore.User{ID: 7, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := users.GetUser(ctx, 7); err != nil {
			t.Fatal(err)
		}
	}
	c := collector(t, []prom.Source{users, orders})
	// Invalidation (tracking, the default) connects once a copy is kept:
	// three reads make none, so nothing is connected and nothing is down.
	compare(t, c, `
# HELP hotkeygen_reads_total Reads of the entity's keys, served locally or from Redis.
# TYPE hotkeygen_reads_total counter
hotkeygen_reads_total{entity="order"} 0
hotkeygen_reads_total{entity="user"} 3
# HELP hotkeygen_invalidation_connections Invalidation subscriptions up now: one per node copies of whose keys are kept; 0 with none kept, with invalidate=off, and while a lost one is being re-established.
# TYPE hotkeygen_invalidation_connections gauge
hotkeygen_invalidation_connections{entity="order"} 0
hotkeygen_invalidation_connections{entity="user"} 0
# HELP hotkeygen_invalidation_connected 1 while the invalidation session of every node copies are kept of is live, so writes made anywhere reach the local copies; 0 while one is lost or connecting, and with invalidate=off.
# TYPE hotkeygen_invalidation_connected gauge
hotkeygen_invalidation_connected{entity="order"} 1
hotkeygen_invalidation_connected{entity="user"} 1
`, "hotkeygen_reads_total", "hotkeygen_invalidation_connections", "hotkeygen_invalidation_connected")
}

// TestOutageHealthMatchesTheLivePage stops Redis under a repository with
// a hot key: the exposition says since when Redis and invalidation are
// down (on the repository's clock, which stands still), counts the hot
// reads served unverified, and says the same as the live page's JSON.
func TestOutageHealthMatchesTheLivePage(t *testing.T) {
	e := newEnv(t, "account", runtime.WithInvalidate(runtime.InvalidateTracking))
	e.put("account:1", "ada")
	e.heat("account:1") // its copy starts the session
	// One hit, once the session vouches for the copy.
	waitFor(t, "a hit", func() bool { e.read("account:1", 1); return e.c.Stats().Hits == 1 })
	e.srv.Kill()
	waitFor(t, "the session's loss", func() bool { return !e.c.Stats().InvalidationConnected() })
	if _, err := e.c.Get(e.ctx, "account:2"); err == nil { // opens the breaker, if the loss did not
		t.Fatal("a cold read succeeded with Redis down")
	}
	e.read("account:1", 5) // served from memory, unverified

	const down = "1.7672256e+09" // 2026-01-01T00:00:00Z, the clock's time
	names := []string{"hotkeygen_hits_total", "hotkeygen_stale_reads_total", "hotkeygen_info", "hotkeygen_invalidation_connected",
		"hotkeygen_invalidation_down_since_seconds", "hotkeygen_redis_down_since_seconds"}
	want := exposition(map[string]map[string]string{"account": {
		"hotkeygen_hits_total":                      "6",
		"hotkeygen_stale_reads_total":               "5",
		"hotkeygen_info":                            thisInstance("tracking"),
		"hotkeygen_invalidation_connected":          "0",
		"hotkeygen_invalidation_down_since_seconds": down,
		"hotkeygen_redis_down_since_seconds":        down,
	}})
	compare(t, collector(t, []prom.Source{e.c}), want, names...)

	// The live page's JSON reports the same health from the same Stats.
	st := e.c.Stats()
	rep := livepage.NewReport(time.Now(), e.c).Entities[0]
	host, _, _ := strings.Cut(thisInstance(""), " ")
	if rep.Host != host || rep.PID != os.Getpid() || rep.Invalidation != "tracking" || rep.InvalidationConnected ||
		rep.InvalidationDownSince == nil || float64(rep.InvalidationDownSince.Unix()) != 1.7672256e+09 ||
		rep.RedisDownSince == nil || !rep.RedisDownSince.Equal(*rep.InvalidationDownSince) ||
		rep.Hits != 6 || rep.StaleReads != 5 || rep.RedisErrors+rep.FailedFast != st.RedisErrors+st.FailedFast || rep.RedisErrors+rep.FailedFast == 0 {
		t.Fatalf("live page %+v, want the health of the exposition", rep)
	}
}

// waitFor polls cond until it holds: sessions start and end in their own
// time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.WaitFor(t, what, cond)
}

// fixed is a Source with a given snapshot that counts its calls.
type fixed struct {
	st    runtime.Stats
	calls atomic.Int64
}

func (f *fixed) Stats() runtime.Stats { f.calls.Add(1); return f.st }

// everything has a different value in every field a metric reads, so a
// metric reading the wrong field shows.
func everything(entity string) *fixed {
	return &fixed{st: runtime.Stats{
		Entity: entity, Reads: 1, HotAccesses: 2, Hits: 3, Misses: 4,
		HotKeys:   []runtime.HotKey{{Key: entity + ":1", QPS: 2500}, {Key: entity + ":2", QPS: 1200.5}},
		LocalSize: 5, LocalBytes: 6, RecorderSize: 7,
		Promotions: 8, Demotions: 9, Refreshes: 10, RefreshErrors: 11, RedisErrors: 12, DecodeErrors: 13,
		Loads: 14, LoadErrors: 15, StaleReads: 16, BigValues: 17, DegradedLoads: 18,
		Invalidations: 19, InvalidationResets: 20, InvalidationLive: 21,
		AggregateReports: 22, AggregateErrors: 23,
		Host: "web-24", PID: 25, Invalidation: runtime.InvalidateTracking, Version: 35,
		InvalidationDownSince: time.Unix(26, 500e6), RedisDownSince: time.Unix(27, 0),
		Changes:     runtime.ChangeStats{Pending: 24, OldestAge: 25 * time.Second, Synced: 26, Failures: 27, ClaimsExpired: 28, Dropped: 29},
		Bloom:       runtime.BloomStats{Checks: 30, Absent: 31, Unready: 32, Adds: 33, Errors: 34},
		KeysTooLong: 36,
	}}
}

func TestEveryFieldHasItsSeries(t *testing.T) {
	src := everything("user")
	want := exposition(map[string]map[string]string{"user": {
		"hotkeygen_reads_total":               "1",
		"hotkeygen_hot_reads_total":           "2",
		"hotkeygen_hits_total":                "3",
		"hotkeygen_misses_total":              "4",
		"hotkeygen_local_entries":             "5",
		"hotkeygen_local_bytes":               "6",
		"hotkeygen_keys_too_long_total":       "36",
		"hotkeygen_recorder_keys":             "7",
		"hotkeygen_promotions_total":          "8",
		"hotkeygen_demotions_total":           "9",
		"hotkeygen_refreshes_total":           "10",
		"hotkeygen_refresh_errors_total":      "11",
		"hotkeygen_redis_errors_total":        "12",
		"hotkeygen_decode_errors_total":       "13",
		"hotkeygen_loads_total":               "14",
		"hotkeygen_load_errors_total":         "15",
		"hotkeygen_stale_reads_total":         "16",
		"hotkeygen_big_values_total":          "17",
		"hotkeygen_degraded_loads_total":      "18",
		"hotkeygen_invalidations_total":       "19",
		"hotkeygen_invalidation_resets_total": "20",
		"hotkeygen_invalidation_connections":  "21",
		"hotkeygen_aggregate_reports_total":   "22",
		"hotkeygen_aggregate_errors_total":    "23",
		"hotkeygen_hot_keys":                  "2",
		"hotkeygen_info":                      "web-24 25 tracking",
		"version":                             "35",
		// A session is down: not connected, since 26.5 s after 1970.
		"hotkeygen_invalidation_connected":          "0",
		"hotkeygen_invalidation_down_since_seconds": "26.5",
		"hotkeygen_redis_down_since_seconds":        "27",
		"hotkeygen_changes_pending":                 "24",
		"hotkeygen_changes_oldest_age_seconds":      "25",
		"hotkeygen_changes_synced_total":            "26",
		"hotkeygen_changes_sync_failures_total":     "27",
		"hotkeygen_changes_claims_expired_total":    "28",
		"hotkeygen_changes_dropped_total":           "29",
		"hotkeygen_bloom_checks_total":              "30",
		"hotkeygen_bloom_absent_total":              "31",
		"hotkeygen_bloom_unready_total":             "32",
		"hotkeygen_bloom_adds_total":                "33",
		"hotkeygen_bloom_errors_total":              "34",
	}}) + `
# HELP hotkeygen_hot_key_qps Reads per second of a key hot now, on this instance: over the detection window, or its busiest recent slot when higher.
# TYPE hotkeygen_hot_key_qps gauge
hotkeygen_hot_key_qps{entity="user",key="user:1"} 2500
hotkeygen_hot_key_qps{entity="user",key="user:2"} 1200.5
`
	compare(t, collector(t, []prom.Source{src}, prom.WithHotKeyQPS()), want)
}

func TestCollectReadsStatsOncePerSourcePerScrape(t *testing.T) {
	a, b := everything("user"), everything("order")
	c := collector(t, []prom.Source{a, b}, prom.WithHotKeyQPS())
	a.calls.Store(0) // NewCollector read the entities
	b.calls.Store(0)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	for scrape := int64(1); scrape <= 2; scrape++ {
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
		if a.calls.Load() != scrape || b.calls.Load() != scrape {
			t.Fatalf("after %d scrapes Stats was called %d and %d times", scrape, a.calls.Load(), b.calls.Load())
		}
	}
}

func TestLint(t *testing.T) {
	c := collector(t, []prom.Source{everything("user"), everything("order")}, prom.WithHotKeyQPS())
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestDuplicateEntitiesAreRefused(t *testing.T) {
	_, err := prom.NewCollector([]prom.Source{everything("user"), everything("order"), everything("user")})
	if err == nil || !strings.Contains(err.Error(), `"user"`) {
		t.Fatalf("NewCollector with two sources of entity user = %v, want an error naming it", err)
	}
	if _, err := prom.NewCollector([]prom.Source{everything("user"), nil}); err == nil {
		t.Fatal("NewCollector with a nil source succeeded")
	}

	// Collectors over different entities register side by side; a second
	// one over an entity already registered is refused by the registry.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector(t, []prom.Source{everything("user")}))
	reg.MustRegister(collector(t, []prom.Source{everything("order")}))
	if err := reg.Register(collector(t, []prom.Source{everything("user")})); err == nil {
		t.Fatal("registered a second collector of entity user")
	}
	if n, err := testutil.GatherAndCount(reg, "hotkeygen_reads_total"); err != nil || n != 2 {
		t.Fatalf("hotkeygen_reads_total has %d series (%v), want one per entity", n, err)
	}
}

// TestRuntimeDoesNotImportPrometheus keeps the client out of programs that
// do not use this package.
func TestRuntimeDoesNotImportPrometheus(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/hotkeygen/hotkeygen/runtime").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/prometheus/") {
			t.Fatalf("runtime depends on %s", pkg)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// onClock is the Option of a Cache on clk, a seam of the tests the API
// does not offer.
func onClock(clk config.Clock) runtime.Option { return func(c *runtime.Config) { c.Clock = clk } }
