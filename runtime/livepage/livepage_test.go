package livepage_test

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// redisAddr is the address of a private redis-server the examples use.
var redisAddr string

func TestMain(m *testing.M) {
	code := redistest.RunWithServer(&redisAddr, m.Run)
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}

// t0 is when the fixed sources' last second ended.
var t0 = time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)

// fixed is a Source with a given snapshot.
type fixed struct {
	st   runtime.Stats
	hist []runtime.Sample
}

func (f *fixed) Stats() runtime.Stats      { return f.st }
func (f *fixed) History() []runtime.Sample { return f.hist }

// healthy is an entity on a live Redis whose last second, ending at t0,
// read 400 times, 300 of them from memory, with one hot key.
func healthy(entity string, t0 time.Time) *fixed {
	return &fixed{
		st: runtime.Stats{
			Entity: entity, Host: "web-1", PID: 4242,
			Reads: 12000, ReadsPerSec: 390.5, HotAccesses: 9000, Hits: 8990, Misses: 10, HitRate: 8990.0 / 9000, TrafficShare: 0.75,
			HotKeys:   []runtime.HotKey{{Key: entity + ":1", QPS: 300, Since: t0.Add(-75 * time.Second), Hits: 8990}},
			LocalSize: 1, LocalBytes: 2048, Promotions: 1,
			Invalidation: runtime.InvalidateTracking, InvalidationLive: 1,
		},
		hist: []runtime.Sample{
			{At: t0.Add(-time.Second), Reads: 380, Hits: 280, RedisReads: 100},
			{At: t0, Reads: 400, Hits: 300, RedisReads: 100},
		},
	}
}

// outage is healthy after Redis stopped answering 10 s before t0 and the
// invalidation session was lost 9 s before: hot reads are served from
// memory unverified, cold ones fail fast.
func outage(entity string, t0 time.Time) *fixed {
	f := healthy(entity, t0)
	f.st.RedisErrors, f.st.FailedFast, f.st.StaleReads = 3, 1200, 3000
	f.st.RedisDownSince = t0.Add(-10 * time.Second)
	f.st.InvalidationDownSince = t0.Add(-9 * time.Second)
	f.st.InvalidationLive = 0
	f.hist = append(f.hist, runtime.Sample{At: t0.Add(time.Second), Reads: 400, Hits: 300, RedisReads: 100, RedisErrors: 100, StaleReads: 300})
	return f
}

// fetch serves one request through h mounted at /debug/hotkeys/, as the
// README shows, on a real HTTP server.
func fetch(t *testing.T, h http.Handler, method, path string) (*http.Response, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/debug/hotkeys/", http.StripPrefix("/debug/hotkeys", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func getReport(t *testing.T, h http.Handler) (livepage.Report, string) {
	t.Helper()
	resp, body := fetch(t, h, "GET", "/debug/hotkeys/hotkeys.json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET hotkeys.json: %s %q\n%s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	var rep livepage.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("hotkeys.json does not decode: %v\n%s", err, body)
	}
	return rep, body
}

func ptr[T any](v T) *T { return &v }

// The health of each entity, as the JSON carries it: the share of all
// reads of the last second served from memory (null when none was), the
// last second's Redis errors and stale reads, whether Redis answers and
// invalidation is connected, and since when they are not.
func TestReportHealth(t *testing.T) {
	off := healthy("user", t0)
	off.st.Invalidation, off.st.InvalidationLive = runtime.InvalidateOff, 0
	cold := healthy("user", t0) // nothing hot: every read goes to Redis
	cold.hist[1].Hits, cold.hist[1].RedisReads = 0, 400
	young := healthy("user", t0) // no second measured yet
	young.hist = nil
	connecting := healthy("user", t0)
	connecting.st.InvalidationDownSince, connecting.st.InvalidationLive = t0.Add(-time.Second), 0

	for _, c := range []struct {
		name string
		src  *fixed
		want livepage.EntityReport // the health fields only
	}{
		{"healthy", healthy("user", t0), livepage.EntityReport{
			MemoryShare: ptr(0.75), Invalidation: "tracking", InvalidationConnected: true,
		}},
		{"Redis stopped", outage("user", t0), livepage.EntityReport{
			MemoryShare: ptr(0.75), RedisErrorsPerSec: 100, StaleReadsPerSec: 300,
			RedisDownSince: ptr(t0.Add(-10 * time.Second)),
			Invalidation:   "tracking", InvalidationDownSince: ptr(t0.Add(-9 * time.Second)),
		}},
		{"no read served from memory", cold, livepage.EntityReport{
			Invalidation: "tracking", InvalidationConnected: true,
		}},
		{"first second", young, livepage.EntityReport{
			Invalidation: "tracking", InvalidationConnected: true,
		}},
		{"first session connecting", connecting, livepage.EntityReport{
			MemoryShare: ptr(0.75), Invalidation: "tracking", InvalidationDownSince: ptr(t0.Add(-time.Second)),
		}},
		{"invalidate=off", off, livepage.EntityReport{
			MemoryShare: ptr(0.75), Invalidation: "off",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, _ := getReport(t, livepage.Handler(c.src))
			got := rep.Entities[0]
			if got.Host != "web-1" || got.PID != 4242 {
				t.Errorf("instance %s pid %d, want web-1 pid 4242", got.Host, got.PID)
			}
			w := c.want
			if !equalPtr(got.MemoryShare, w.MemoryShare) || got.RedisErrorsPerSec != w.RedisErrorsPerSec || got.StaleReadsPerSec != w.StaleReadsPerSec ||
				!equalTime(got.RedisDownSince, w.RedisDownSince) || got.Invalidation != w.Invalidation ||
				got.InvalidationConnected != w.InvalidationConnected || !equalTime(got.InvalidationDownSince, w.InvalidationDownSince) {
				t.Errorf("health\n got memory %s, errors %v/s, stale %v/s, Redis down since %v, invalidation %q connected %v down since %v\nwant memory %s, errors %v/s, stale %v/s, Redis down since %v, invalidation %q connected %v down since %v",
					show(got.MemoryShare), got.RedisErrorsPerSec, got.StaleReadsPerSec, show(got.RedisDownSince), got.Invalidation, got.InvalidationConnected, show(got.InvalidationDownSince),
					show(w.MemoryShare), w.RedisErrorsPerSec, w.StaleReadsPerSec, show(w.RedisDownSince), w.Invalidation, w.InvalidationConnected, show(w.InvalidationDownSince))
			}
		})
	}
}

func equalPtr(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
func equalTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

func show[T any](p *T) any {
	if p == nil {
		return "null"
	}
	return *p
}

// The report copies the counters and hot keys of each source, in the
// order given; lists are empty, never null.
func TestReportCopiesStats(t *testing.T) {
	users, orders := outage("user", t0), &fixed{st: runtime.Stats{Entity: "order", Invalidation: runtime.InvalidateTracking}}
	rep := livepage.NewReport(t0, users, orders)
	if !rep.At.Equal(t0) || len(rep.Entities) != 2 || rep.Entities[0].Entity != "user" || rep.Entities[1].Entity != "order" {
		t.Fatalf("report at %v of %d entities, want user then order at %v", rep.At, len(rep.Entities), t0)
	}
	st, u := users.st, rep.Entities[0]
	if u.Reads != st.Reads || u.HotReads != st.HotAccesses || u.Hits != st.Hits || u.Misses != st.Misses ||
		u.RedisErrors != 3 || u.FailedFast != 1200 || u.StaleReads != 3000 || u.ReadsPerSec != st.ReadsPerSec ||
		u.HitRate != st.HitRate || u.TrafficShare != st.TrafficShare || u.LocalSize != 1 || u.LocalBytes != 2048 || u.Promotions != 1 {
		t.Fatalf("user totals %+v differ from its Stats %+v", u, st)
	}
	if len(u.HotKeys) != 1 || u.HotKeys[0].Key != "user:1" || u.HotKeys[0].HotSeconds != 75 || u.HotKeys[0].Hits != 8990 {
		t.Fatalf("hot keys %+v, want user:1, hot for 75 s", u.HotKeys)
	}
	if len(u.History) != 3 || u.History[2] != livepage.PointReport(users.hist[2]) {
		t.Fatalf("history %+v, want the source's three seconds", u.History)
	}
	if o := rep.Entities[1]; o.HotKeys == nil || o.History == nil || len(o.HotKeys)+len(o.History) != 0 {
		t.Fatalf("an idle entity's lists must be empty, not null: %+v", o)
	}
}

// withChanges gives src's entity a change buffer and a Bloom filter, as
// changes=on bloom=on do.
func withChanges(src *fixed) *fixed {
	src.st.Changes = runtime.ChangeStats{On: true, Pending: 42, OldestAge: 90 * time.Second, Synced: 155, SyncedPerSec: 19, Failures: 2, ClaimsExpired: 1}
	src.st.Bloom = runtime.BloomStats{On: true, Checks: 4554, Absent: 3948, Adds: 10_000}
	return src
}

// The JSON's field names are an interface: renaming one breaks readers.
func TestJSONFieldNames(t *testing.T) {
	_, body := getReport(t, livepage.Handler(outage("user", t0)))
	var doc struct {
		Entities []struct {
			HotKeys []map[string]any `json:"hot_keys"`
			History []map[string]any `json:"history"`
		} `json:"entities"`
	}
	var top map[string]any
	if err := json.Unmarshal([]byte(body), &top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	entity := top["entities"].([]any)[0].(map[string]any)
	for _, c := range []struct {
		what string
		obj  map[string]any
		want []string
	}{
		{"report", top, []string{"at", "entities"}},
		{"entity", entity, []string{
			"bloom", "changes", "demotions", "entity", "failed_fast", "history", "hit_rate", "hits", "host", "hot_keys", "hot_reads",
			"invalidation", "invalidation_connected", "invalidation_down_since", "local_bytes", "local_size",
			"memory_share", "misses", "pid", "promotions", "reads", "reads_per_sec", "redis_down_since",
			"redis_errors", "redis_errors_per_sec", "stale_reads", "stale_reads_per_sec", "traffic_share", "version",
		}},
		{"hot key", doc.Entities[0].HotKeys[0], []string{"cluster_qps", "hits", "hot_seconds", "key", "qps", "since"}},
		{"history point", doc.Entities[0].History[0], []string{"at", "hits", "reads", "redis_errors", "redis_reads", "stale_reads"}},
	} {
		var got []string
		for k := range c.obj {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s fields %v, want %v", c.what, got, c.want)
		}
	}
	_, body = getReport(t, livepage.Handler(withChanges(healthy("order", t0))))
	var withBuffer struct {
		Entities []struct {
			Changes map[string]any `json:"changes"`
			Bloom   map[string]any `json:"bloom"`
		} `json:"entities"`
	}
	if err := json.Unmarshal([]byte(body), &withBuffer); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		obj  map[string]any
		want []string
	}{
		{"changes", withBuffer.Entities[0].Changes, []string{"claims_expired", "dropped_not_an_id", "failures", "oldest_seconds", "pending", "synced", "synced_per_sec"}},
		{"bloom", withBuffer.Entities[0].Bloom, []string{"absent", "adds", "checks", "errors", "unready"}},
	} {
		got := slices.Sorted(maps.Keys(c.obj))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s fields %v, want %v", c.what, got, c.want)
		}
	}
	if p := withBuffer.Entities[0].Changes["pending"]; p != float64(42) {
		t.Errorf("changes.pending = %v, want 42", p)
	}
	// Undefined values are null, not a misleading 0 or year 1.
	_, body = getReport(t, livepage.Handler(&fixed{st: runtime.Stats{Entity: "idle", Invalidation: "tracking"}}))
	for _, want := range []string{`"memory_share": null`, `"redis_down_since": null`, `"invalidation_down_since": null`, `"changes": null`, `"bloom": null`} {
		if !strings.Contains(body, want) {
			t.Errorf("the JSON of an idle entity lacks %s:\n%s", want, body)
		}
	}
}

// text returns what a reader sees of the element of page whose
// data-field (or data-alert) is name: its text, without tags, or "" when
// there is none.
func text(page, attr, name string) string {
	m := regexp.MustCompile(`<(dd|p|span)[^>]*data-` + attr + `="` + name + `"[^>]*>`).FindStringSubmatchIndex(page)
	if m == nil {
		return ""
	}
	inner, _, _ := strings.Cut(page[m[1]:], "</"+page[m[2]:m[3]]+">")
	return strings.TrimSpace(html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(inner, "")))
}

// The page says what the JSON says, in words: a reader sees at a glance
// that Redis is down and invalidation lost, and since when.
func TestPageShowsHealth(t *testing.T) {
	// The page says how long ago, from when it is served.
	now := time.Now()
	clock := func(ago time.Duration) string { return now.Add(-ago).Format("15:04:05") }
	cold := healthy("order", now)
	cold.hist[1].Hits = 0
	off := healthy("item", now)
	off.st.Invalidation = runtime.InvalidateOff
	for _, c := range []struct {
		name   string
		src    *fixed
		fields map[string]string // data-field → text
		alerts map[string]string // data-alert → text; others must be absent
	}{
		{"healthy", healthy("user", now), map[string]string{
			"instance": "web-1 · pid 4242", "memory-share": "75.0%", "redis-errors": "0", "stale-reads": "0",
			"redis": "answering", "invalidation": "connected (tracking)",
		}, nil},
		{"Redis stopped", outage("user", now), map[string]string{
			"memory-share": "75.0%", "redis-errors": "100", "stale-reads": "300",
			"redis": "unreachable since " + clock(10*time.Second), "invalidation": "not connected since " + clock(9*time.Second),
		}, map[string]string{
			"redis":        "Redis unreachable since " + clock(10*time.Second) + " (10s): hot keys are served from memory, other calls fail at once until it answers.",
			"invalidation": "Invalidation not connected since " + clock(9*time.Second) + " (9s): writes made elsewhere do not reach the local copies, which are served only while Redis cannot be asked.",
		}},
		{"no read served from memory", cold, map[string]string{"memory-share": "—"}, nil},
		{"invalidate=off", off, map[string]string{"invalidation": "off: refresh only"}, nil},
		{"the change buffer and the Bloom filter", withChanges(healthy("order", now)), map[string]string{
			"changes-pending": "42", "changes-oldest": "1m30s", "changes-synced": "19", "changes-failures": "2 / 1",
			"bloom-absent": "3,948 of 4,554", "bloom-unready": "0 / 0",
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, page := fetch(t, livepage.Handler(c.src), "GET", "/debug/hotkeys/")
			for field, want := range c.fields {
				if got := text(page, "field", field); got != want {
					t.Errorf("%s shows %q, want %q", field, got, want)
				}
			}
			for _, alert := range []string{"redis", "invalidation"} {
				if got := text(page, "alert", alert); got != c.alerts[alert] {
					t.Errorf("alert %s: %q, want %q", alert, got, c.alerts[alert])
				}
			}
		})
	}
}

func TestPageStructure(t *testing.T) {
	order := healthy("order", t0)
	order.st.Version = 2 // a bumped entity says so; version 1 says nothing
	resp, page := fetch(t, livepage.Handler(healthy("user", t0), order), "GET", "/debug/hotkeys/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`<section class="entity" data-entity="user">`,
		`<h2>user</h2>`,
		`<section class="entity" data-entity="order">`,
		`<h2>order <small>version 2</small></h2>`,
		`<td class="key" title="user:1">user:1</td>`,
		`<svg class="chart"`,
		`<polyline class="reads" points="590.0,`, // a second before the newest point, on a one-minute chart
		`<polyline class="hits" points="590.0,`,
		`<polyline class="redis" points="590.0,`,
		` 600.0,`, // the newest point sits at the right edge
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// Everything the page loads or links is relative, so the handler can be
	// mounted under any prefix, and nothing comes from elsewhere.
	if m := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*"?(/|https?:)`).FindString(page); m != "" {
		t.Errorf("page has an absolute link: %s", m)
	}
	if !strings.Contains(page, `fetch(location.href`) {
		t.Error("page does not refresh itself")
	}
	if _, page := fetch(t, livepage.Handler(), "GET", "/debug/hotkeys/"); !strings.Contains(page, "No repositories were given to livepage.Handler.") {
		t.Errorf("a page of no sources does not say so:\n%s", page)
	}
}

func TestPageEscapesKeys(t *testing.T) {
	const evil = `p:<script>alert("x")</script>&"'` + "\xff"
	src := healthy("user", t0)
	src.st.HotKeys[0].Key = evil
	_, page := fetch(t, livepage.Handler(src), "GET", "/debug/hotkeys/")
	if strings.Contains(page, "<script>alert") || strings.Contains(page, `alert("x")`) {
		t.Fatalf("a key injected markup:\n%s", page)
	}
	if !strings.Contains(page, `p:&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#34;&#39;`) {
		t.Fatalf("the key is not shown escaped:\n%s", page)
	}
	rep, _ := getReport(t, livepage.Handler(src))
	if got := rep.Entities[0].HotKeys[0].Key; got != strings.ToValidUTF8(evil, "\uFFFD") {
		t.Fatalf("JSON key %q, want %q with the invalid byte replaced", got, evil)
	}
}

func TestRoutes(t *testing.T) {
	h := livepage.Handler(healthy("user", t0))
	for _, c := range []struct {
		method, path string
		status       int
		header       string // a header the response must carry, "Name: value"
	}{
		{"GET", "/debug/hotkeys/", 200, "Cache-Control: no-store"},
		{"HEAD", "/debug/hotkeys/", 200, ""},
		{"GET", "/debug/hotkeys/hotkeys.json", 200, "Cache-Control: no-store"},
		{"POST", "/debug/hotkeys/", 405, "Allow: GET, HEAD"},
		{"DELETE", "/debug/hotkeys/hotkeys.json", 405, "Allow: GET, HEAD"},
		{"GET", "/debug/hotkeys/index.html", 404, ""},
		{"GET", "/debug/hotkeys/hotkeys.json/x", 404, ""},
	} {
		resp, _ := fetch(t, h, c.method, c.path)
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %s, want %d", c.method, c.path, resp.Status, c.status)
		}
		if name, value, ok := strings.Cut(c.header, ": "); ok && resp.Header.Get(name) != value {
			t.Errorf("%s %s: %s %q, want %q", c.method, c.path, name, resp.Header.Get(name), value)
		}
	}

	// Mounted at the prefix itself, the page is asked for without the
	// trailing slash its relative links need.
	mux := http.NewServeMux()
	mux.Handle("/debug/hotkeys", http.StripPrefix("/debug/hotkeys", h))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/debug/hotkeys", nil)
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "hotkeys/" {
		t.Fatalf("GET /debug/hotkeys: %d Location %q, want 301 to hotkeys/", rec.Code, rec.Header().Get("Location"))
	}
}

func TestNilSourceIsRefused(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "source 1 is nil") {
			t.Fatalf("Handler with a nil source: %v, want a panic naming it", r)
		}
	}()
	livepage.Handler(healthy("user", t0), nil)
}

// Every repository and Cache is a Source.
var (
	_ livepage.Source = (*runtime.Cache[string, struct{}])(nil)
	_ livepage.Source = (*userstore.UserRepo)(nil)
)

// TestRuntimeDoesNotImportHTTP keeps the web out of programs that do not
// serve the page: it is why the page is a package of its own.
func TestRuntimeDoesNotImportHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/hotkeygen/hotkeygen/runtime").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net/http" || pkg == "html/template" {
			t.Fatalf("runtime depends on %s", pkg)
		}
	}
}
