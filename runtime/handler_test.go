package runtime

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	_ Observable = (*Cache[string, profile])(nil)
	_ Observable = (*Cache[int64, profile])(nil)
)

// secret is a value's content that must never be shown.
const secret = "s3cret-value-never-shown"

// live is a Cache with one hot key, p:1, and a second of history: 99 cold
// reads, the promoting miss and 21 hits.
func live(t *testing.T, opts ...Option) *env {
	t.Helper()
	e := newEnv(t, opts...)
	e.put("p:1", sample(1, secret))
	e.tick(time.Second) // the first mark of history
	e.heat("p:1")
	for range 20 {
		e.get("p:1")
	}
	e.tick(time.Second)
	return e
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
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	client.CloseIdleConnections()
	return resp, string(b)
}

func getReport(t *testing.T, h http.Handler) (Report, string) {
	t.Helper()
	resp, body := fetch(t, h, "GET", "/debug/hotkeys/hotkeys.json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET hotkeys.json: %s %q\n%s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	var rep Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("hotkeys.json does not decode: %v\n%s", err, body)
	}
	return rep, body
}

func TestHandlerJSONReportsHotKeysAndHistory(t *testing.T) {
	users := live(t)
	orders := newEnv(t, WithEntity("order"))
	h := Handler(users.c, orders.c)

	rep, body := getReport(t, h)
	if strings.Contains(body, secret) {
		t.Fatalf("a value reached the JSON:\n%s", body)
	}
	if len(rep.Entities) != 2 || rep.Entities[0].Entity != "profile" || rep.Entities[1].Entity != "order" {
		t.Fatalf("entities %+v, want profile then order, in the order given", rep.Entities)
	}
	st := users.c.Stats()
	p := rep.Entities[0]
	if p.Reads != 121 || p.HotReads != 22 || p.Hits != 21 || p.Misses != 1 || p.LocalSize != 1 || p.Promotions != 1 {
		t.Fatalf("profile totals %+v, want 121 reads, 22 hot, 21 hits, 1 miss, 1 local, 1 promotion", p)
	}
	if p.HitRate != st.HitRate || p.TrafficShare != st.TrafficShare || p.ReadsPerSec != st.GetQPS || p.LocalBytes != st.LocalBytes {
		t.Fatalf("profile rates %+v differ from Stats %+v", p, st)
	}
	if len(p.HotKeys) != 1 {
		t.Fatalf("hot keys %+v, want p:1 alone", p.HotKeys)
	}
	k, want := p.HotKeys[0], st.HotKeys[0]
	if k.Key != "p:1" || k.QPS != want.QPS || k.QPS < 100 || !k.Since.Equal(want.Since) || k.Hits != want.Hits {
		t.Fatalf("hot key %+v, want %+v", k, want)
	}
	if len(p.History) != 1 {
		t.Fatalf("history %+v, want the one second measured", p.History)
	}
	if s := p.History[0]; !s.At.Equal(epoch.Add(2*time.Second)) || s.Reads != 121 || s.Hits != 21 || s.RedisReads != 100 {
		t.Fatalf("history point %+v, want 121 reads, 21 hits, 100 Redis reads a second at %v", s, epoch.Add(2*time.Second))
	}
	o := rep.Entities[1]
	if o.HotKeys == nil || o.History == nil || len(o.HotKeys)+len(o.History) != 0 {
		t.Fatalf("an idle entity's lists must be empty, not null: %+v", o)
	}
}

// The JSON's field names are an interface: renaming one breaks readers.
func TestHandlerJSONFieldNames(t *testing.T) {
	_, body := getReport(t, Handler(live(t).c))
	var doc struct {
		Entities []struct {
			HotKeys []map[string]any `json:"hot_keys"`
			History []map[string]any `json:"history"`
		} `json:"entities"`
	}
	var top map[string]any
	json.Unmarshal([]byte(body), &top)
	json.Unmarshal([]byte(body), &doc)
	entity := top["entities"].([]any)[0].(map[string]any)
	for _, c := range []struct {
		what string
		obj  map[string]any
		want []string
	}{
		{"report", top, []string{"at", "entities"}},
		{"entity", entity, []string{"demotions", "entity", "history", "hit_rate", "hits", "hot_keys", "hot_reads", "local_bytes", "local_size", "misses", "promotions", "reads", "reads_per_sec", "redis_errors", "traffic_share"}},
		{"hot key", doc.Entities[0].HotKeys[0], []string{"cluster_qps", "hits", "hot_seconds", "key", "qps", "since"}},
		{"history point", doc.Entities[0].History[0], []string{"at", "hits", "reads", "redis_reads"}},
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
}

func TestHandlerPage(t *testing.T) {
	e := live(t)
	resp, page := fetch(t, Handler(e.c), "GET", "/debug/hotkeys/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	if strings.Contains(page, secret) {
		t.Fatal("a value reached the page")
	}
	for _, want := range []string{
		`<section class="entity" data-entity="profile">`,
		`<td class="key" title="p:1">p:1</td>`,
		`<svg class="chart"`,
		`<polyline class="reads" points="600.0,`, // the newest point sits at the right edge
		`<polyline class="hits" points="600.0,`,
		`<polyline class="redis" points="600.0,`,
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
}

func TestHandlerEscapesKeys(t *testing.T) {
	e := newEnv(t)
	const evil = `p:<script>alert("x")</script>&"'` + "\xff"
	e.put(evil, sample(1, secret))
	e.heat(evil)
	_, page := fetch(t, Handler(e.c), "GET", "/debug/hotkeys/")
	if strings.Contains(page, "<script>alert") || strings.Contains(page, `alert("x")`) {
		t.Fatalf("a key injected markup:\n%s", page)
	}
	if !strings.Contains(page, `p:&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#34;&#39;`) {
		t.Fatalf("the key is not shown escaped:\n%s", page)
	}
	rep, _ := getReport(t, Handler(e.c))
	if got := rep.Entities[0].HotKeys[0].Key; got != strings.ToValidUTF8(evil, "\uFFFD") {
		t.Fatalf("JSON key %q, want %q with the invalid byte replaced", got, evil)
	}
}

func TestHandlerRoutes(t *testing.T) {
	h := Handler(live(t).c)
	for _, c := range []struct {
		method, path string
		status       int
		header       string // a header the response must carry, "Name: value"
	}{
		{"GET", "/debug/hotkeys/", 200, ""},
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

func TestChartScale(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{0, 1}, {0.5, 1}, {1, 1}, {1.5, 2}, {3, 5}, {7, 10}, {10, 10}, {11, 20}, {4321, 5000}, {50001, 100000},
	} {
		if got := niceCeil(c.in); got != c.want {
			t.Errorf("niceCeil(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	t0 := epoch
	hist := []PointReport{
		{At: t0.Add(-(HistoryLen + 1) * time.Second), Reads: 9000}, // out of the widest span
		{At: t0.Add(-HistoryLen * time.Second), Reads: 1000},       // its left edge
		{At: t0.Add(-300 * time.Second), Reads: 400, Hits: 300, RedisReads: 100},
		{At: t0, Reads: 100, Hits: 0, RedisReads: 100},
	}
	ch := newChart(hist)
	if ch.Top != "1,000" || ch.Span != 10 || ch.Empty {
		t.Fatalf("chart %+v, want ten minutes topped at 1,000: the point out of span does not count", ch)
	}
	// y runs down from 120 (zero) to 4 (the top).
	if ch.Reads != "0.0,4.0 300.0,73.6 600.0,108.4" || ch.Hits != "0.0,120.0 300.0,85.2 600.0,120.0" {
		t.Fatalf("reads %q hits %q", ch.Reads, ch.Hits)
	}
	// A young history is drawn over the narrowest span that holds it.
	young := newChart(hist[2:])
	if young.Span != 5 || young.Reads != "0.0,27.2 600.0,96.8" || young.Top != "500" {
		t.Fatalf("five minutes of history: %+v", young)
	}
	if ch := newChart(hist[3:]); ch.Span != 1 || ch.Reads != "600.0,4.0" {
		t.Fatalf("one point: %+v", ch)
	}
	if ch := newChart(nil); !ch.Empty || ch.Reads != "" {
		t.Fatalf("chart of no history: %+v", ch)
	}
}

func TestFormats(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", -4321: "-4,321"} {
		if got := formatCount(in); got != want {
			t.Errorf("formatCount(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{0: "0s", 59.9: "59s", 65: "1m05s", 3600 + 7*60 + 3: "1h07m"} {
		if got := formatSeconds(in); got != want {
			t.Errorf("formatSeconds(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{12: "12 B", 2048: "2.0 KiB", 3 << 20: "3.0 MiB"} {
		if got := formatBytes(in); got != want {
			t.Errorf("formatBytes(%v) = %q, want %q", in, got, want)
		}
	}
}
