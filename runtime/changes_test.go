package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/changes"
)

// rowDB stands in for the database behind the change buffer: rows whose
// ID is their version, changed by the test and read by the sync workers'
// batch loader, which also checks that no id is synced by two workers at
// once.
type rowDB struct {
	t  *testing.T
	mu sync.Mutex
	// rows is the truth; a missing key is a deleted row.
	rows map[string]*profile
	// inflight holds the ids some worker is syncing: from its load to its
	// hook, which lie within its claim.
	inflight map[string]bool
	overlaps atomic.Int64
	// delivered is the last version the hook received per id, -1 gone.
	delivered map[string]int64
	// remark, when set, is called by the loader with the batch it just
	// read, to change a row while its batch is being synced.
	remark func(ctx context.Context, ks []string)
}

// workerTag, carried by a test worker's context, collects the ids its load
// took; a victim's load reports them on victim and blocks until the
// context ends, as a worker killed between claim and acknowledgement. A
// load holds mu throughout: a worker whose context ends stops waiting for
// its load (see group.Unattended), and releases its ids once the load is over.
type workerTag struct {
	mu     sync.Mutex
	ids    []string
	victim chan []string
}

type workerKey struct{}

func newRowDB(t *testing.T) *rowDB {
	return &rowDB{t: t, rows: map[string]*profile{}, inflight: map[string]bool{}, delivered: map[string]int64{}}
}

// change writes a new version of key, or deletes it, and returns what it
// did, for the marker to record.
func (db *rowDB) change(key string, del bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if del {
		delete(db.rows, key)
		return
	}
	v := int64(1)
	if r := db.rows[key]; r != nil {
		v = r.ID + 1
	}
	db.rows[key] = &profile{ID: v, Name: key}
}

func (db *rowDB) load(ctx context.Context, ks []string) (map[string]*profile, error) {
	tag, _ := ctx.Value(workerKey{}).(*workerTag)
	if tag != nil {
		tag.mu.Lock()
		defer tag.mu.Unlock()
		if ctx.Err() != nil {
			return nil, ctx.Err() // its worker was stopped, and released what it held
		}
	}
	db.mu.Lock()
	out := map[string]*profile{}
	for _, k := range ks {
		if db.inflight[k] {
			db.overlaps.Add(1)
			db.t.Errorf("%s is synced by two workers at once", k)
		}
		db.inflight[k] = true
		if r := db.rows[k]; r != nil {
			out[k] = cloneProfile(r)
		}
	}
	remark := db.remark
	if tag != nil {
		tag.ids = append(tag.ids[:0], ks...)
	}
	db.mu.Unlock()
	if tag != nil && tag.victim != nil {
		tag.victim <- ks
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if remark != nil {
		remark(ctx, ks)
	}
	return out, nil
}

func (db *rowDB) hook(_ context.Context, rows map[string]*profile) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	for k, v := range rows {
		delete(db.inflight, k)
		if v == nil {
			db.delivered[k] = -1
		} else {
			db.delivered[k] = v.ID
		}
	}
	return nil
}

// release forgets the ids a killed worker held: it is gone, so it no
// longer syncs them.
func (db *rowDB) release(ks []string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, k := range ks {
		delete(db.inflight, k)
	}
}

// changeFleet is several instances of one repository with the change
// buffer on, over clients of their own, sharing a manual clock, and a
// reader without a loader, which sees only what Redis holds.
type changeFleet struct {
	t      *testing.T
	db     *rowDB
	clock  *fakeclock.Clock
	caches []*Cache[string, profile]
	reader *Cache[string, profile]
	raw    redis.UniversalClient
}

func newChangeFleet(t *testing.T, n int, client func() redis.UniversalClient, opts ...Option) *changeFleet {
	f := &changeFleet{t: t, db: newRowDB(t), clock: fakeclock.New(epoch), raw: client()}
	base := []Option{WithEntity("profile"), withClock(f.clock), WithLogger(quiet), WithInvalidate(InvalidateOff),
		WithChanges(true), WithSyncBatch(7), WithBatchLoader(f.db.load), WithSyncHook(f.db.hook)}
	for range n {
		c, err := New(client(), profileGlue, append(base, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		f.caches = append(f.caches, c)
	}
	r, err := New(client(), profileGlue, WithEntity("profile"), withClock(f.clock), WithLogger(quiet), WithInvalidate(InvalidateOff), WithChanges(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	f.reader = r
	return f
}

// work runs syncOnce on c, as the runtime's worker does, until ctx or c
// ends, or with untilEmpty until a claim finds nothing. A step that
// fails because its worker was stopped leaves its claims to lapse, and
// its ids are no longer in flight: the worker is gone. Other failures are
// retried, as the worker retries every interval.
func (f *changeFleet) work(ctx context.Context, c *Cache[string, profile], untilEmpty bool) {
	tag, _ := ctx.Value(workerKey{}).(*workerTag)
	if tag == nil {
		tag = &workerTag{}
		ctx = context.WithValue(ctx, workerKey{}, tag)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(c.e.Context(), stop)() // Close stops it, as it stops the runtime's worker
	for ctx.Err() == nil {
		var step changes.Step
		var err error
		done := make(chan struct{})
		// Close waits for a step in progress, as for the runtime's worker.
		if !c.e.Go(func() {
			defer close(done)
			step, err = c.e.SyncOnce(ctx)
			if err != nil && ctx.Err() != nil {
				tag.mu.Lock()
				f.db.release(tag.ids)
				tag.mu.Unlock()
			}
		}) {
			return
		}
		<-done
		if err == nil && step.Claimed == 0 && untilEmpty {
			return
		}
		if err != nil || step.Claimed == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// drain advances the clock past every lease, so the claims of killed
// workers lapse, and syncs with every live instance until the buffer and
// its claims are empty.
func (f *changeFleet) drain(live ...*Cache[string, profile]) {
	f.t.Helper()
	f.clock.Advance(DefaultSyncLease + time.Second)
	buf, claims := changes.Keys("profile")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		var wg sync.WaitGroup
		for _, c := range live {
			wg.Go(func() { f.work(ctx, c, true) })
		}
		wg.Wait()
		n, err := f.raw.ZCard(ctx, buf).Result()
		m, err2 := f.raw.ZCard(ctx, claims).Result()
		if err == nil && err2 == nil && n == 0 && m == 0 {
			return
		}
		if ctx.Err() != nil {
			f.t.Fatalf("the buffer still holds %d ids and %d claims (%v, %v)", n, m, err, err2)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// check compares what a read returns for every id ever marked with the
// database, and with what the sync hook was last handed.
func (f *changeFleet) check(marked map[string]bool) {
	f.t.Helper()
	ctx := context.Background()
	f.db.mu.Lock()
	defer f.db.mu.Unlock()
	if len(f.db.inflight) != 0 {
		f.t.Errorf("ids still in flight after the drain: %v", f.db.inflight)
	}
	for key := range marked {
		want := f.db.rows[key]
		got, err := f.reader.Get(ctx, key)
		switch {
		case want == nil && !errors.Is(err, ErrNotFound):
			f.t.Errorf("%s was deleted from the database last, but a read returns %v, %v", key, got, err)
		case want != nil && err != nil:
			f.t.Errorf("%s is at version %d in the database, but a read fails: %v", key, want.ID, err)
		case want != nil && got.ID != want.ID:
			f.t.Errorf("%s is at version %d in the database, but a read returns version %d", key, want.ID, got.ID)
		}
		wantHook := int64(-1)
		if want != nil {
			wantHook = want.ID
		}
		if d, ok := f.db.delivered[key]; !ok || d != wantHook {
			f.t.Errorf("the sync hook last got %s at version %d (seen %v), want %d", key, d, ok, wantHook)
		}
	}
}

// TestChangeBufferManyWorkers marks ids from three instances while nine
// workers sync them, rows change again while their batch is synced, one
// worker is cancelled and one instance closed between claim and
// acknowledgement; every id must end synced after its last mark, none by
// two workers at once.
func TestChangeBufferManyWorkers(t *testing.T) {
	for _, topo := range []struct {
		name   string
		client func(t *testing.T) func() redis.UniversalClient
	}{
		{"single", func(t *testing.T) func() redis.UniversalClient {
			srv := redistest.Start(t)
			return func() redis.UniversalClient { return srv.Client(t) }
		}},
		{"cluster", func(t *testing.T) func() redis.UniversalClient {
			cl := redistest.StartCluster(t, 3)
			return func() redis.UniversalClient { return cl.Client(t) }
		}},
	} {
		t.Run(topo.name, func(t *testing.T) {
			f := newChangeFleet(t, 3, topo.client(t))
			var remarks atomic.Int64
			f.db.remark = func(ctx context.Context, ks []string) {
				// One batch in four has a row change while it is synced.
				// Marked through an instance that stays open, and not with the
				// worker's context, which may be ending: a change made and not
				// marked would be lost by the test, not by the buffer.
				if rand.IntN(4) == 0 {
					f.db.change(ks[0], false)
					if err := f.caches[rand.IntN(2)].MarkChanged(context.Background(), ks[0]); err != nil {
						t.Errorf("re-mark %s: %v", ks[0], err)
					}
					remarks.Add(1)
				}
			}
			const ids, rounds = 300, 40
			var marksMu sync.Mutex
			marked := map[string]bool{}
			ctx := context.Background()

			workCtx, stopWork := context.WithCancel(ctx)
			var workers sync.WaitGroup
			killed := make(chan []string, 2)
			for i, c := range f.caches {
				for w := range 3 {
					tag := &workerTag{}
					wctx, cancel := context.WithCancel(context.WithValue(workCtx, workerKey{}, tag))
					switch {
					case i == 0 && w == 0: // cancelled mid-batch
						tag.victim = make(chan []string, 1)
						go func() { ks := <-tag.victim; killed <- ks; cancel() }()
					case i == 2 && w == 0: // its instance is closed mid-batch
						tag.victim = make(chan []string, 1)
						go func() { ks := <-tag.victim; killed <- ks; c.Close() }()
					}
					workers.Go(func() {
						defer cancel()
						f.work(wctx, c, false)
					})
				}
			}

			var markers sync.WaitGroup
			for i, c := range f.caches[:2] { // the third is closed early
				markers.Go(func() {
					for r := range rounds {
						batch := make([]string, 0, 12)
						for range 12 {
							key := "p:" + strconv.Itoa(rand.IntN(ids))
							f.db.change(key, rand.IntN(10) == 0)
							batch = append(batch, key)
						}
						if err := c.MarkChanged(ctx, batch...); err != nil {
							t.Errorf("marker %d, round %d: %v", i, r, err)
							return
						}
						marksMu.Lock()
						for _, k := range batch {
							marked[k] = true
						}
						marksMu.Unlock()
						f.clock.Advance(time.Millisecond)
					}
				})
			}
			markers.Wait()
			// Both victims must have been killed before the drain.
			for range 2 {
				<-killed
			}
			stopWork()
			workers.Wait()

			f.drain(f.caches[0], f.caches[1])
			f.check(marked)
			if remarks.Load() == 0 {
				t.Error("no row changed while its batch was synced; the test shows nothing of that")
			}
			var expired, synced uint64
			for _, c := range f.caches {
				st := c.Stats().Changes
				expired += st.ClaimsExpired
				synced += st.Synced
			}
			if expired == 0 {
				t.Error("no claim lapsed, though two workers died holding one")
			}
			if synced < uint64(len(marked)) {
				t.Errorf("%d ids synced for %d marked", synced, len(marked))
			}
			if f.db.overlaps.Load() != 0 {
				t.Errorf("%d ids were synced by two workers at once", f.db.overlaps.Load())
			}
			t.Logf("%d ids marked, %d synced, %d re-marked mid-batch, %d claims lapsed", len(marked), synced, remarks.Load(), expired)
		})
	}
}

// TestChangeBufferSurvivesRestartWithAOF kills Redis, persisted with
// appendfsync always, while a worker holds a claim and ids wait; after the
// restart every id is synced: the buffer and the claims came back from the
// append-only file.
func TestChangeBufferSurvivesRestartWithAOF(t *testing.T) {
	srv, err := redistest.Launch("--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	f := newChangeFleet(t, 2, func() redis.UniversalClient { return srv.Client(t) })
	ctx := context.Background()
	marked := map[string]bool{}
	mark := func(from, to int) {
		t.Helper()
		var ks []string
		for i := from; i < to; i++ {
			key := "p:" + strconv.Itoa(i)
			f.db.change(key, false)
			ks = append(ks, key)
			marked[key] = true
		}
		if err := f.caches[0].MarkChanged(ctx, ks...); err != nil {
			t.Fatal(err)
		}
	}
	mark(0, 100)
	if _, err := f.caches[0].e.SyncOnce(ctx); err != nil { // one batch synced before the crash
		t.Fatal(err)
	}
	tag := &workerTag{victim: make(chan []string, 1)}
	victim, cancel := context.WithCancel(context.WithValue(ctx, workerKey{}, tag))
	done := make(chan struct{})
	go func() { defer close(done); f.caches[1].e.SyncOnce(victim) }()
	held := <-tag.victim // a worker holds a claim

	srv.Kill()
	cancel()
	<-done
	f.db.release(held)
	if err := srv.Relaunch(); err != nil {
		t.Fatal(err)
	}
	buf, claims := changes.Keys("profile")
	if n, err := f.raw.ZCard(ctx, claims).Result(); err != nil || n != int64(len(held)) {
		t.Fatalf("after the restart the claims hold %d ids (%v), want the %d held when Redis died", n, err, len(held))
	}
	if n, err := f.raw.ZCard(ctx, buf).Result(); err != nil || n != int64(100-7-len(held)) {
		t.Fatalf("after the restart the buffer holds %d ids (%v), want %d", n, err, 100-7-len(held))
	}
	mark(50, 150) // some again, some new
	f.drain(f.caches...)
	f.check(marked)
}

// TestSyncWorkerInBackground runs the worker as the runtime does, on the
// wall clock: rows marked changed reach Redis without anyone calling it,
// and Close stops it (goleak checks).
func TestSyncWorkerInBackground(t *testing.T) {
	srv := redistest.Start(t)
	db := newRowDB(t)
	c, err := New(srv.Client(t), profileGlue, WithEntity("profile"), WithLogger(quiet), WithInvalidate(InvalidateOff),
		WithChanges(true), WithSyncEvery(10*time.Millisecond), WithBatchLoader(db.load), WithSyncHook(db.hook))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var ks []string
	for i := range 1200 { // more than two batches of 500: one tick drains them
		key := "p:" + strconv.Itoa(i)
		db.change(key, false)
		ks = append(ks, key)
	}
	if err := c.MarkChanged(ctx, ks...); err != nil {
		t.Fatal(err)
	}
	raw := srv.Client(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := raw.Exists(ctx, ks...).Result()
		synced := c.Stats().Changes.Synced
		if err == nil && n == int64(len(ks)) && synced == uint64(len(ks)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d rows reached Redis (%v), %d acknowledged", n, len(ks), err, synced)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMarkChangedNeedsTheBuffer: without changes=on, marking says how to
// turn it on.
func TestMarkChangedNeedsTheBuffer(t *testing.T) {
	e := newEnv(t)
	err := e.c.MarkChanged(e.ctx, "p:1")
	if err == nil || !strings.Contains(err.Error(), "changes=on") {
		t.Fatalf("MarkChanged without the buffer: %v, want an error naming changes=on", err)
	}
}

// TestChangeStats: the buffer's length and the age of its oldest id are
// what the last claim saw, a failed batch is counted and returned to the
// buffer, and junk in the buffer is dropped and counted.
func TestChangeStats(t *testing.T) {
	srv := redistest.Start(t)
	clk := fakeclock.New(epoch)
	fail := errors.New("database down")
	var failing atomic.Bool
	load := func(_ context.Context, ks []string) (map[string]*profile, error) {
		if failing.Load() {
			return nil, fail
		}
		out := map[string]*profile{}
		for _, k := range ks {
			out[k] = &profile{Name: k}
		}
		return out, nil
	}
	c, err := New(srv.Client(t), profileGlue, WithEntity("profile"), withClock(clk), WithLogger(quiet), WithInvalidate(InvalidateOff),
		WithChanges(true), WithSyncBatch(3), WithBatchLoader(load))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for i := range 5 {
		if err := c.MarkChanged(ctx, fmt.Sprintf("p:%d", i)); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
	}
	buf, _ := changes.Keys("profile")
	raw := srv.Client(t)
	raw.ZAdd(ctx, buf, redis.Z{Score: float64(epoch.Add(-time.Hour).UnixMilli()), Member: "\xc1junk"},
		redis.Z{Score: float64(epoch.Add(-2 * time.Hour).UnixMilli()), Member: "\xdb\x7f\xff\xff\xffab"}) // a 2 GiB string, declared

	failing.Store(true)
	if _, err := c.e.SyncOnce(ctx); !errors.Is(err, fail) {
		t.Fatalf("syncOnce with the loader failing: %v, want %v", err, fail)
	}
	st := c.Stats().Changes
	if st.Failures != 1 || st.Dropped != 2 || st.Pending != 4 {
		t.Errorf("after a failed batch: %+v, want 1 failure, 2 dropped, 4 pending as the claim left them", st)
	}
	if want := 4 * time.Second; st.OldestAge != want {
		t.Errorf("OldestAge = %v, want %v (p:1, marked 4 s before the claim)", st.OldestAge, want)
	}
	failing.Store(false)
	for range 3 {
		if _, err := c.e.SyncOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats().Changes; st.Synced != 5 || st.Pending != 0 || st.OldestAge != 0 {
		t.Errorf("after the drain: %+v, want 5 synced, none pending", st)
	}
}
