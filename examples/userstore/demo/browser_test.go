package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
// browser: the hot users and the chart render, the page refreshes itself,
// and a screenshot of it is kept (live-page.png). HOTKEYGEN_PAGE_WARMUP
// (a duration) runs the demo's default load that long first, for a
// screenshot with history to show: docs/live-page.png was taken with
// HOTKEYGEN_PAGE_WARMUP=150s.
func TestLivePageInChromium(t *testing.T) {
	l := testLoad
	warmup, _ := time.ParseDuration(os.Getenv("HOTKEYGEN_PAGE_WARMUP"))
	if warmup > 0 {
		l = defaultLoad
	}
	bin := chromiumPath(t) // before anything is started
	d := startDemo(t, l)
	d.waitHot(t, 2, 2)
	d.checkEndpoints(t)
	time.Sleep(warmup)

	// The screenshot is taken while the DOM is dumped, to keep the test
	// quick.
	shot := filepath.Join(artifacts(t), "live-page.png")
	shotErr := make(chan error)
	shotDir := t.TempDir()
	go func() {
		_, err := chromium(bin, shotDir, d.url, "--screenshot="+shot, "--window-size=1280,900", "--virtual-time-budget=1500")
		shotErr <- err
	}()
	dom, err := chromium(bin, t.TempDir(), d.url, "--dump-dom", "--virtual-time-budget=3000")
	if err := errors.Join(err, <-shotErr); err != nil {
		t.Fatal(err)
	}
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

	checkScreenshot(t, shot, 1280, 900)
	t.Logf("screenshot: %s", shot)
}

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
