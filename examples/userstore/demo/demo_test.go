package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/pgtest"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// postgres is the PostgreSQL server TestMain starts, for the tests that
// run the demo on both databases.
var postgres *pgtest.Server

func TestMain(m *testing.M) {
	os.Exit(pgtest.RunWithServer(&postgres, func() int {
		code := m.Run()
		if code == 0 {
			if err := goleak.Find(); err != nil { // stopping the demo stops everything it started
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return code
	}))
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testLoad is a light load, so a browser has the CPU it needs, under
// which two crowd users are hot at once.
var testLoad = load{Users: 500, Orders: 20, Workers: 2, Rate: 4000, Skew: 1.1, OrderShare: 0.1, Crowd: 2, CrowdShare: 0.5, CrowdEvery: time.Hour}

// demoServer is the demo's load and page, running on a real redis-server.
type demoServer struct {
	redis *redistest.Server
	repos *repos
	rdb   *redis.Client // a client of redis, not the repositories'
	url   string        // of the live page
	stop  func()        // stops the load and the server, failing t if either failed
}

// startDemo starts the demo's load and page on a new redis-server, and
// on the database at dbURL: SQLite in memory when empty.
func startDemo(t *testing.T, l load, dbURL string) *demoServer {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	r, err := openRepos(context.Background(), rdb, dbURL, quiet, l.Users, l.Orders)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() { l.run(ctx, r, nil) })
	wg.Go(func() { serveErr = serve(ctx, ln, newMux(r)) })
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			if serveErr != nil {
				t.Errorf("server: %v", serveErr)
			}
		})
	}
	t.Cleanup(stop)
	return &demoServer{redis: srv, rdb: rdb, repos: r, url: "http://" + ln.Addr().String() + pagePath, stop: stop}
}

// waitHot waits until the page has at least keys hot users and points
// seconds of history to draw for every entity.
func (d *demoServer) waitHot(t *testing.T, keys, points int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, h := d.repos.users.Stats(), min(len(d.repos.users.History()), len(d.repos.orders.History()))
		if len(st.HotKeys) >= keys && h >= points {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s, %d hot users and %d seconds of history; want %d and %d", len(st.HotKeys), h, keys, points)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkEndpoints reads the page's JSON and follows / as a browser would.
func (d *demoServer) checkEndpoints(t *testing.T) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	resp, err := client.Get(d.url + "hotkeys.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep livepage.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Entities) != 2 || rep.Entities[0].Entity != "user" || rep.Entities[1].Entity != "order" || len(rep.Entities[0].HotKeys) < 2 {
		t.Fatalf("report %+v, want users with hot keys, then orders", rep)
	}
	root, err := client.Get(strings.TrimSuffix(d.url, pagePath) + "/")
	if err != nil {
		t.Fatal(err)
	}
	root.Body.Close()
	if root.StatusCode != http.StatusFound || root.Header.Get("Location") != pagePath {
		t.Fatalf("GET /: %s to %q, want a redirect to %s", root.Status, root.Header.Get("Location"), pagePath)
	}
}

var (
	// tableRow is a hot user in the printed table: key, QPS, hot for, hits.
	tableRow = regexp.MustCompile(`(?m)^ +user:\d+ +\d+ +\d+s +\d+$`)
	// orderKey is an order's key in Redis: its tenant and number.
	orderKey = regexp.MustCompile(`^order:(\w+):(\d+)$`)
	// databaseLine is the database's queries against the reads served.
	databaseLine = regexp.MustCompile(`(?m)^database +\d+ queries/s for \d+ reads/s served \(SQLite in memory\)$`)
)

// TestRunStopsCleanly runs the whole demo, on its embedded Redis, as
// `make demo` does, and stops it as Ctrl-C does once it has shown what a
// user of `make demo` looks for (a hot user, the crowd moving), with
// -otel's chart of read durations on stopping: run
// returns nil, and TestMain finds no goroutine left behind. It waits for
// what is printed, not for a time: on a loaded machine the load may take
// seconds to reach the rate that makes a user hot.
func TestRunStopsCleanly(t *testing.T) {
	l := testLoad
	// One crowd user with 81% of the reads for 3 s: over hot_qps (500)
	// for a whole second of detection as long as the demo reads 650 times
	// a second, a fraction of its 4,000 (a clean-clone run on two cores
	// loaded by other work drove it at 800, and a crowd of 60% moving
	// every second made no user hot in two minutes).
	l.Crowd, l.CrowdShare, l.CrowdEvery = 1, 0.9, 3*time.Second
	c := config{http: "127.0.0.1:0", every: time.Second, load: l, otel: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A file takes the demo's writes from several goroutines at once;
	// the test reads a copy of them.
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	shown := func(s string) bool { return tableRow.MatchString(s) && strings.Count(s, "flash crowd:") >= 3 }
	out := &watchedOutput{File: f, enough: shown, stop: cancel}
	// The limit only ends a demo that never shows a hot key, for a clear
	// failure instead of the test binary's timeout.
	limit := time.AfterFunc(2*time.Minute, cancel)
	defer limit.Stop()
	runErr := run(ctx, c, out)
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if runErr != nil {
		t.Fatalf("run: %v\n%s", runErr, got)
	}
	for _, want := range []string{"using an embedded Redis", "using SQLite in memory", "live page: http://127.0.0.1:", "flash crowd: user:", "stopped",
		"hotkey.read.duration:", "\nuser local GET ", "\nuser redis GET "} { // -otel's chart, of the hot users' local reads too
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !databaseLine.MatchString(got) {
		t.Errorf("no line on the database's queries was printed:\n%s", got)
	}
	if !tableRow.MatchString(got) {
		t.Errorf("no hot key was printed in two minutes:\n%s", got)
	}
	if n := strings.Count(got, "flash crowd:"); n < 3 {
		t.Errorf("the crowd moved %d times, want 3 or more:\n%s", n, got)
	}
}

// watchedOutput passes the demo's writes to its file, unsynchronised as
// a terminal's would be, and keeps a copy: once the copy holds what the
// test waits for (enough), it calls stop, as Ctrl-C would.
type watchedOutput struct {
	*os.File
	enough func(string) bool
	stop   func()

	mu   sync.Mutex
	seen strings.Builder
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	n, err := w.File.Write(p)
	w.mu.Lock()
	w.seen.Write(p[:n])
	done := w.enough(w.seen.String())
	w.mu.Unlock()
	if done {
		w.stop()
	}
	return n, err
}

func TestConfigCheck(t *testing.T) {
	ok := config{every: time.Second, load: testLoad}
	if err := ok.check(); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]func(*config){
		"one user":       func(c *config) { c.load.Users = 1 },
		"no workers":     func(c *config) { c.load.Workers = 0 },
		"flat skew":      func(c *config) { c.load.Skew = 1 },
		"crowd never":    func(c *config) { c.load.CrowdEvery = 0 },
		"never printing": func(c *config) { c.every = 0 },
	} {
		c := ok
		bad(&c)
		if c.check() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestOrdersFollowTheStreamOfChanges runs the demo's load with its stream
// of order changes and reads of orders that never existed, on each
// database: the change buffer syncs the changes, the Bloom filter turns
// the reads away, and once the stream stops every order Redis holds is
// the database's row.
func TestOrdersFollowTheStreamOfChanges(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dbURL := ""
			if name == "postgres" {
				dbURL = postgres.NewDatabase(t)
			}
			l := testLoad
			l.Changes, l.Missing, l.OrderShare = 50, 0.3, 0.3
			d := startDemo(t, l, dbURL)
			deadline := time.Now().Add(20 * time.Second)
			for {
				st := d.repos.orders.Stats()
				if st.Changes.Synced >= 50 && st.Bloom.Absent >= 50 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 20 s: %+v synced, %+v from the Bloom filter", st.Changes, st.Bloom)
				}
				time.Sleep(50 * time.Millisecond)
			}
			d.stop()
			for wait := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				m := d.ordersMismatch(t)
				if m == "" {
					break
				}
				if time.Now().After(wait) {
					t.Fatalf("20 s after the stream stopped: %s", m)
				}
			}
		})
	}
}

// ordersMismatch returns the first order Redis holds otherwise than the
// database, or "": a row that differs, or a row remembered as absent.
func (d *demoServer) ordersMismatch(t *testing.T) string {
	ctx := context.Background()
	keys, err := d.rdb.Keys(ctx, "order:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		m := orderKey.FindStringSubmatch(key)
		if m == nil {
			continue // a load's lease, not a row
		}
		num, _ := strconv.ParseUint(m[2], 10, 32)
		want, err := d.repos.db.Order(ctx, m[1], uint32(num))
		if err != nil && !errors.Is(err, runtime.ErrNotFound) {
			t.Fatal(err)
		}
		b, err := d.rdb.Get(ctx, key).Bytes()
		if err != nil {
			continue // gone since KEYS: expired, or its lease ended
		}
		if string(b) == "\xc1hotkeygen:null" {
			if want != nil {
				return key + " is remembered as absent, but the database has it"
			}
			continue
		}
		var got userstore.Order
		if err := got.ReadMsgpack(b); err != nil {
			return key + ": " + err.Error()
		}
		if want == nil || got.Total != want.Total {
			return fmt.Sprintf("%s holds %+v in Redis, the database %+v", key, got, want)
		}
	}
	return ""
}
