package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// installChromium tells the reader how to get the browser the page is
// tested in; the test fails without it, never skips.
const installChromium = "chromium is not installed: install chromium: apt-get install -y chromium (Debian/Ubuntu; .ci/run does it), or put a chromium on the PATH"

// chromiumPath returns the browser's path, failing t when there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(installChromium)
	}
	return bin
}

// chromium runs the headless browser bin on url with args, in a profile
// of its own under dir, and returns what it wrote to stdout.
func chromium(bin, dir, url string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + dir,
	}, append(args, url)...)
	cmd := exec.CommandContext(ctx, bin, args...)
	if nice, err := exec.LookPath("nice"); err == nil {
		// The browser yields the CPU to the demo it looks at, whose
		// chart would otherwise show the second the browser started in.
		cmd = exec.CommandContext(ctx, nice, append([]string{"-n", "19", bin}, args...)...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// artifacts is where the test leaves files for people to look at:
// $HOTKEYGEN_ARTIFACTS when set, a temporary directory otherwise.
func artifacts(t *testing.T) string {
	dir := os.Getenv("HOTKEYGEN_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	hotRow    = regexp.MustCompile(`<tr class="hot"><td class="key" title="(user:\d+)">`)
	polylines = regexp.MustCompile(`<polyline class="(reads|hits|redis)" points="([^"]*)"`)
	refreshes = regexp.MustCompile(`<body data-refreshes="(\d+)"`)
)

// TestLivePageInChromium loads the demo's page in a real headless
// browser: the hot users, their health and the chart render, the page
// refreshes itself, and a screenshot of it is kept (live-page.png). Then
// Redis is stopped under the running load, and the page, loaded again,
// must show the outage (live-page-outage.png): Redis unreachable,
// invalidation not connected, Redis errors per second, and the share of
// reads still served from memory. HOTKEYGEN_PAGE_WARMUP (a duration) runs
// the demo's default load that long first, for a screenshot with history
// to show: docs/live-page.png was taken with HOTKEYGEN_PAGE_WARMUP=150s.
func TestLivePageInChromium(t *testing.T) {
	l := testLoad
	warmup, _ := time.ParseDuration(os.Getenv("HOTKEYGEN_PAGE_WARMUP"))
	if warmup > 0 {
		l = defaultLoad
	}
	bin := chromiumPath(t) // before anything is started
	d := startDemo(t, l, "")
	d.waitHot(t, 2, 2)
	d.checkEndpoints(t)
	time.Sleep(warmup)

	shot := filepath.Join(artifacts(t), "live-page.png")
	dom := render(t, bin, d.url, shot)
	rows := hotRow.FindAllStringSubmatch(dom, -1)
	if len(rows) < 2 {
		t.Errorf("rendered page has %d hot user rows, want at least 2:\n%s", len(rows), dom)
	}
	lines := polylines.FindAllStringSubmatch(dom, -1)
	if len(lines) != 6 { // three per entity
		t.Errorf("rendered page has %d chart lines, want 3 per entity", len(lines))
	}
	for _, m := range lines {
		if n := len(strings.Fields(m[2])); n < 2 {
			t.Errorf("the %s line has %d points, want at least 2: %q", m[1], n, m[2])
		}
	}
	if m := refreshes.FindStringSubmatch(dom); m == nil {
		t.Errorf("the page's script never refreshed it:\n%s", dom)
	} else if n, _ := strconv.Atoi(m[1]); n < 1 {
		t.Errorf("refreshed %d times", n)
	}
	if !strings.Contains(dom, `data-entity="order"`) {
		t.Error("rendered page lacks the order entity")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	users := section(t, dom, "user")
	for field, want := range map[string]*regexp.Regexp{
		"instance":     regexp.MustCompile(`^` + regexp.QuoteMeta(host) + ` · pid ` + strconv.Itoa(os.Getpid()) + `$`),
		"memory-share": regexp.MustCompile(`^\d+\.\d%$`), // hot users are read
		"redis":        regexp.MustCompile(`^answering$`),
		"invalidation": regexp.MustCompile(`^connected \(tracking\)$`),
		"redis-errors": regexp.MustCompile(`^0$`),
	} {
		doc := dom
		if field != "instance" {
			doc = users
		}
		if got := fieldText(doc, "field", field); !want.MatchString(got) {
			t.Errorf("healthy page: %s shows %q, want %v", field, got, want)
		}
	}
	// Above the repositories, the database's load: its queries against
	// the reads served, of which there are many.
	for field, want := range map[string]*regexp.Regexp{"db-queries": regexp.MustCompile(`^\d+$`), "reads-served": regexp.MustCompile(`^[1-9]\d{2,}$`)} {
		if got := fieldText(dom, "field", field); !want.MatchString(got) {
			t.Errorf("healthy page: %s shows %q, want %v", field, got, want)
		}
	}
	if strings.Contains(dom, `class="alert"`) {
		t.Error("the healthy page shows an alert")
	}
	checkScreenshot(t, shot, 1280, 900)
	t.Logf("screenshot: %s", shot)

	// Redis stops under the load. Once a whole second of the outage is
	// measured, the page must say so.
	d.redis.Kill()
	killed := time.Now()
	deadline := killed.Add(15 * time.Second)
	for {
		e := livepage.NewReport(time.Now(), d.repos.sources()...).Entities[0]
		last := e.History[len(e.History)-1].At
		if e.RedisDownSince != nil && e.InvalidationDownSince != nil && last.After(killed.Add(time.Second)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after Redis stopped, the users' report says: Redis down since %v, invalidation down since %v, last second at %v", e.RedisDownSince, e.InvalidationDownSince, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
	shot = filepath.Join(artifacts(t), "live-page-outage.png")
	dom = render(t, bin, d.url, shot)
	users = section(t, dom, "user")
	for field, want := range map[string]*regexp.Regexp{
		"memory-share": regexp.MustCompile(`^\d+\.\d%$`), // hot users are still served
		"redis":        regexp.MustCompile(`^unreachable since \d\d:\d\d:\d\d$`),
		"invalidation": regexp.MustCompile(`^not connected since \d\d:\d\d:\d\d$`),
		"redis-errors": regexp.MustCompile(`^([1-9][\d,]*|\d\.\d|<0\.1)$`), // not 0
		"stale-reads":  regexp.MustCompile(`^([1-9][\d,]*|\d\.\d|<0\.1)$`), // the hot users' reads
	} {
		if got := fieldText(users, "field", field); !want.MatchString(got) {
			t.Errorf("page during the outage: %s shows %q, want %v", field, got, want)
		}
	}
	for alert, want := range map[string]string{
		"redis":        "Redis unreachable since ",
		"invalidation": "Invalidation not connected since ",
	} {
		if got := fieldText(users, "alert", alert); !strings.HasPrefix(got, want) {
			t.Errorf("page during the outage: alert %s says %q, want %q…", alert, got, want)
		}
	}
	checkScreenshot(t, shot, 1280, 900)
	t.Logf("screenshot of the outage: %s", shot)

	// Redis comes back, empty: the page says so within seconds (and the
	// clients' background redials end).
	d.redis.Restart(t)
	deadline = time.Now().Add(15 * time.Second)
	for {
		rep := livepage.NewReport(time.Now(), d.repos.sources()...)
		if e := rep.Entities[0]; e.RedisDownSince == nil && e.InvalidationConnected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after Redis restarted, the users' report says: %+v", rep.Entities[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1100 * time.Millisecond) // go-redis's redial goroutine wakes once a second
}

// render loads url in headless Chromium twice at once: once to save a
// screenshot to shot, once to return the DOM after the page's script has
// refreshed it, to keep the test quick.
func render(t *testing.T, bin, url, shot string) string {
	t.Helper()
	shotErr := make(chan error)
	shotDir := t.TempDir()
	go func() {
		_, err := chromium(bin, shotDir, url, "--screenshot="+shot, "--window-size=1280,900", "--virtual-time-budget=1500")
		shotErr <- err
	}()
	dom, err := chromium(bin, t.TempDir(), url, "--dump-dom", "--virtual-time-budget=3000")
	if err := errors.Join(err, <-shotErr); err != nil {
		t.Fatal(err)
	}
	return dom
}

// section returns the part of dom that shows entity.
func section(t *testing.T, dom, entity string) string {
	t.Helper()
	_, s, ok := strings.Cut(dom, `data-entity="`+entity+`"`)
	if !ok {
		t.Fatalf("rendered page lacks the %s entity:\n%s", entity, dom)
	}
	s, _, _ = strings.Cut(s, "</section>")
	return s
}

// fieldText returns the text a reader sees in the element of dom whose
// data-attr is name (data-field, data-alert), or "" when there is none.
func fieldText(dom, attr, name string) string {
	m := regexp.MustCompile(`<(dd|p|span)[^>]*data-` + attr + `="` + name + `"[^>]*>`).FindStringSubmatchIndex(dom)
	if m == nil {
		return ""
	}
	inner, _, _ := strings.Cut(dom[m[1]:], "</"+dom[m[2]:m[3]]+">")
	return strings.TrimSpace(html.UnescapeString(tags.ReplaceAllString(inner, "")))
}

var tags = regexp.MustCompile(`<[^>]*>`)

// checkScreenshot fails unless path is a w×h PNG with something drawn on
// it: many colours, as text and lines anti-aliased give.
func checkScreenshot(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", path, err)
	}
	if b := img.Bounds(); b != image.Rect(0, 0, w, h) {
		t.Errorf("screenshot is %v, want %dx%d", b, w, h)
	}
	colours := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 16 {
		t.Errorf("screenshot has %d colours: nothing rendered", len(colours))
	}
}
