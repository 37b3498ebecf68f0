package runtime

import (
	"context"
	"errors"
	"flag"
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
	"github.com/hotkeygen/hotkeygen/runtime/internal/lease"
)

// slowRow stands in for a database whose reads take a while: a load
// reads the row, says so on read, and returns it only once release is
// closed, as a query whose result is on its way back.
type slowRow struct {
	mu      sync.Mutex
	row     *profile
	calls   atomic.Int32
	read    chan struct{} // closed by the first load, once it has read
	release chan struct{}
}

func newSlowRow(name string) *slowRow {
	return &slowRow{row: sample(1, name), read: make(chan struct{}), release: make(chan struct{})}
}

func (db *slowRow) load(ctx context.Context, key string) (*profile, error) {
	db.mu.Lock()
	row := cloneProfile(db.row)
	db.mu.Unlock()
	if db.calls.Add(1) == 1 {
		close(db.read)
		<-db.release
	}
	return row, nil
}

// update commits a new row, as the application's UPDATE does.
func (db *slowRow) update(name string) {
	db.mu.Lock()
	db.row = sample(1, name)
	db.mu.Unlock()
}

// The cache-aside race (issue 49), step by step: a read misses and its
// loader reads the row (old); the application commits an update and then
// deletes the key, or sets it, through the loading instance, through
// another instance, or as another program; then the load's write-back
// arrives. Redis never holds the old row after the delete or the set, and
// a read begun after it, on either instance, returns the new row. The
// read that raced the update may return either row. On one server and on
// a cluster. Without the lease (rebuild_lock=off), the old row is written
// after the delete: the race the lease closes, kept here as what the
// option costs.
func TestADeleteOrSetAfterTheUpdateWinsOverTheLoadThatRacedIt(t *testing.T) {
	type step = func(ctx context.Context, key string, a, b *Cache[string, profile], raw redis.UniversalClient) error
	rows := []struct {
		name string
		// after runs once the update is committed, with the loading
		// instance a, another b and a client of another program.
		after   step
		noLease bool // rebuild_lock=off
		wantOld bool // Redis keeps the old row (only without the lease)
	}{
		{name: "the loading instance deletes", after: func(ctx context.Context, key string, a, _ *Cache[string, profile], _ redis.UniversalClient) error {
			return a.Del(ctx, key)
		}},
		{name: "another instance deletes", after: func(ctx context.Context, key string, _, b *Cache[string, profile], _ redis.UniversalClient) error {
			return b.Del(ctx, key)
		}},
		{name: "another program deletes (DEL)", after: func(ctx context.Context, key string, _, _ *Cache[string, profile], raw redis.UniversalClient) error {
			return raw.Del(ctx, key).Err()
		}},
		{name: "the loading instance sets the new row", after: func(ctx context.Context, key string, a, _ *Cache[string, profile], _ redis.UniversalClient) error {
			return a.Set(ctx, key, sample(1, "new"))
		}},
		{name: "another instance sets the new row", after: func(ctx context.Context, key string, _, b *Cache[string, profile], _ redis.UniversalClient) error {
			return b.Set(ctx, key, sample(1, "new"))
		}},
		{name: "without the lease, another program's DEL is undone", noLease: true, wantOld: true,
			after: func(ctx context.Context, key string, _, _ *Cache[string, profile], raw redis.UniversalClient) error {
				return raw.Del(ctx, key).Err()
			}},
	}
	race := func(t *testing.T, key string, batch, noLease, wantOld bool, after step, client func() redis.UniversalClient) {
		db := newSlowRow("old")
		loader := WithLoader(db.load)
		if batch {
			loader = WithBatchLoader(func(ctx context.Context, ks []string) (map[string]*profile, error) {
				rows := map[string]*profile{}
				for _, k := range ks {
					rows[k], _ = db.load(ctx, k)
				}
				return rows, nil
			})
		}
		instance := func() *Cache[string, profile] {
			c, err := New(client(), profileGlue, WithEntity("profile"), withClock(fakeclock.New(epoch)), WithLogger(quiet),
				WithInvalidate(InvalidateOff), loader, WithRebuildLock(!noLease))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
		a, b, raw := instance(), instance(), client()
		ctx := context.Background()

		raced := make(chan *profile, 1)
		read := func(c *Cache[string, profile]) (*profile, error) {
			if !batch {
				return c.Get(ctx, key)
			}
			vs, err := c.GetMany(ctx, []string{key})
			if err != nil {
				return nil, err
			}
			return vs[0], nil
		}
		go func() { // 1. a read misses; its loader reads the old row
			v, err := read(a)
			if err != nil {
				t.Error(err)
			}
			raced <- v
		}()
		<-db.read
		db.update("new") // 2. the update commits, then the delete or set
		if err := after(ctx, key, a, b, raw); err != nil {
			t.Fatal(err)
		}
		close(db.release) // 3. the load's write-back arrives
		if v := <-raced; v == nil || v.Name != "old" && v.Name != "new" {
			t.Fatalf("the read that raced the update got %+v", v)
		}

		got := func() string { // what Redis holds
			b, err := raw.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				return "nothing"
			}
			var p profile
			if err != nil || msgpack.Unmarshal(b, &p) != nil {
				return "bytes " + strconv.Quote(string(b))
			}
			return p.Name
		}()
		if wantOld {
			if got != "old" {
				t.Fatalf("without the lease Redis holds %s; the race it stands for is gone, update this row", got)
			}
			return
		}
		if got == "old" {
			t.Fatal("Redis holds the old row after the delete or set that followed the update")
		}
		for name, c := range map[string]*Cache[string, profile]{"the loading instance": a, "another instance": b} {
			if v, err := read(c); err != nil || v == nil || v.Name != "new" {
				t.Errorf("%s read %+v, %v after the delete or set, want the new row", name, v, err)
			}
		}
	}
	cl := redistest.StartCluster(t, 3)
	for _, via := range []struct {
		name  string
		batch bool
	}{{"Get", false}, {"GetMany with a batch loader", true}} {
		for i, tc := range rows {
			t.Run(via.name+"/one server/"+tc.name, func(t *testing.T) {
				srv := redistest.Start(t)
				race(t, "p:1", via.batch, tc.noLease, tc.wantOld, tc.after, func() redis.UniversalClient { return srv.Client(t) })
			})
			t.Run(via.name+"/a cluster/"+tc.name, func(t *testing.T) {
				key := "p:" + strconv.Itoa(i) + ":" + strconv.FormatBool(via.batch)
				race(t, key, via.batch, tc.noLease, tc.wantOld, tc.after, func() redis.UniversalClient { return cl.Client(t) })
			})
		}
	}
}

// The cache-aside race over a collection (layout=hash), step by step as
// above: a read of an owner misses and its loader reads the collection
// (old); the application commits an update and then deletes the owner,
// writes or deletes an item, through the loading instance, another
// instance or as another program; then the load's write-back arrives.
// Redis never holds the old collection after it, and a read begun after
// it returns the new one, whole (HGetAll) and by item (HGet).
func TestACollectionWriteAfterTheUpdateWinsOverTheLoadThatRacedIt(t *testing.T) {
	owner := loginOwner{7, "ios"}
	key := owner.String()
	later := time.Now().Add(time.Hour)
	item := func(token string, status int) *login {
		return &login{User: 7, Platform: "ios", Token: token, Status: status, ExpiresAt: later}
	}
	type cols = [2]*Collection[loginOwner, string, login]
	for _, tc := range []struct {
		name string
		// update commits the new collection, from the old one: a and b
		// at status 1; after runs once it is committed.
		update  func(m map[string]*login)
		after   func(ctx context.Context, c cols, raw redis.UniversalClient) error
		noLease bool
		want    string // the tokens and statuses a read returns after, and Redis holds
	}{
		{"the loading instance deletes the owner", func(m map[string]*login) { m["a"].Status = 2 },
			func(ctx context.Context, c cols, _ redis.UniversalClient) error { return c[0].Del(ctx, owner) }, false, "a2 b1"},
		{"another instance deletes the owner", func(m map[string]*login) { m["a"].Status = 2 },
			func(ctx context.Context, c cols, _ redis.UniversalClient) error { return c[1].Del(ctx, owner) }, false, "a2 b1"},
		{"another program deletes the owner (DEL)", func(m map[string]*login) { m["a"].Status = 2 },
			func(ctx context.Context, _ cols, raw redis.UniversalClient) error { return raw.Del(ctx, key).Err() }, false, "a2 b1"},
		{"the loading instance writes the item", func(m map[string]*login) { m["a"].Status = 2 },
			func(ctx context.Context, c cols, _ redis.UniversalClient) error { return c[0].HSet(ctx, item("a", 2)) }, false, "a2"},
		{"another instance deletes an item", func(m map[string]*login) { delete(m, "b") },
			func(ctx context.Context, c cols, _ redis.UniversalClient) error { return c[1].HDel(ctx, owner, "b") }, false, "a1"},
		{"another program writes the item (HSET)", func(m map[string]*login) { m["a"].Status = 2 },
			func(ctx context.Context, _ cols, raw redis.UniversalClient) error {
				b, err := msgpack.Marshal(item("a", 2))
				if err != nil {
					return err
				}
				return raw.HSet(ctx, key, "a", b).Err()
			}, false, "a2"},
		{"without the lease, another program's DEL is undone", func(m map[string]*login) { m["a"].Status = 2 },
			func(ctx context.Context, _ cols, raw redis.UniversalClient) error { return raw.Del(ctx, key).Err() }, true, "a1 b1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			ctx := context.Background()
			var mu sync.Mutex
			rows := map[string]*login{"a": item("a", 1), "b": item("b", 1)}
			read, release := make(chan struct{}), make(chan struct{})
			var calls atomic.Int32
			load := func(context.Context, loginOwner) (map[string]*login, error) {
				mu.Lock()
				m := map[string]*login{}
				for f, v := range rows {
					m[f] = cloneLogin(v)
				}
				mu.Unlock()
				if calls.Add(1) == 1 {
					close(read)
					<-release
				}
				return m, nil
			}
			var c cols
			for i := range c {
				c[i] = newColEnv(t, srv.Client(t), srv.Client(t), loginGlue, WithCollectionLoader(load), WithRebuildLock(!tc.noLease)).c
			}
			raw := srv.Client(t)
			raced := make(chan error, 1)
			go func() { // 1. a read misses; its loader reads the old collection
				_, err := c[0].HGetAll(ctx, owner)
				raced <- err
			}()
			<-read
			mu.Lock() // 2. the update commits, then the write
			tc.update(rows)
			mu.Unlock()
			if err := tc.after(ctx, c, raw); err != nil {
				t.Fatal(err)
			}
			close(release) // 3. the load's write-back arrives
			if err := <-raced; err != nil {
				t.Fatalf("the read that raced the update: %v", err)
			}
			statuses := func(m map[string]*login) string {
				var out []string
				for _, f := range slices.Sorted(maps.Keys(m)) {
					out = append(out, f+strconv.Itoa(m[f].Status))
				}
				return strings.Join(out, " ")
			}
			held := map[string]*login{} // what Redis holds
			fields, err := raw.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			for f, b := range fields {
				if !strings.HasPrefix(f, "%") {
					var v login
					if err := msgpack.Unmarshal([]byte(b), &v); err != nil {
						t.Fatalf("field %q holds %q", f, b)
					}
					held[f] = &v
				}
			}
			if tc.noLease {
				if got := statuses(held); got != tc.want {
					t.Fatalf("without the lease Redis holds %q, want the old %q; the race it stands for is gone, update this row", got, tc.want)
				}
				return
			}
			if got := statuses(held); got != "" && got != tc.want {
				t.Fatalf("Redis holds %q after the write that followed the update, want %q or nothing", got, tc.want)
			}
			for i, col := range c {
				m, err := col.HGetAll(ctx, owner)
				if err != nil || statuses(m) != tc.want {
					t.Errorf("instance %d: HGetAll = %q, %v after the write, want %q", i, statuses(m), err, tc.want)
				}
				v, err := col.HGet(ctx, owner, "a")
				if got := ""; err == nil {
					got = "a" + strconv.Itoa(v.Status)
					if !strings.HasPrefix(tc.want, got) {
						t.Errorf("instance %d: HGet = %s after the write, want the new item of %q", i, got, tc.want)
					}
				}
			}
		})
	}
}

// The race of the change buffer's sync (issue 49): an id is marked, the
// sync reads its row (old); the application commits another update and
// then deletes or sets the key, through a repository or as another
// program; then the sync's write arrives. Redis never holds the old row
// after the delete or set, and a read after it returns the new row.
// Without the lease, another program's DEL is undone by the sync's SET.
func TestADeleteOrSetAfterTheUpdateWinsOverTheSyncThatRacedIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		after   func(ctx context.Context, c *Cache[string, profile], raw redis.UniversalClient) error
		noLease bool
		want    string // what Redis holds after the sync
	}{
		{"the syncing instance deletes", func(ctx context.Context, c *Cache[string, profile], _ redis.UniversalClient) error {
			return c.Del(ctx, "p:1")
		}, false, "nothing"},
		{"the syncing instance sets the new row", func(ctx context.Context, c *Cache[string, profile], _ redis.UniversalClient) error {
			return c.Set(ctx, "p:1", sample(1, "new"))
		}, false, "new"},
		{"another program deletes (DEL)", func(ctx context.Context, _ *Cache[string, profile], raw redis.UniversalClient) error {
			return raw.Del(ctx, "p:1").Err()
		}, false, "nothing"},
		{"without the lease, another program's DEL is undone", func(ctx context.Context, _ *Cache[string, profile], raw redis.UniversalClient) error {
			return raw.Del(ctx, "p:1").Err()
		}, true, "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			db := newSlowRow("old")
			c := newEnvOn(t, srv, WithEntity("profile"), WithChanges(true), WithRebuildLock(!tc.noLease), WithLoader(db.load),
				WithBatchLoader(func(ctx context.Context, ks []string) (map[string]*profile, error) {
					rows := map[string]*profile{}
					for _, k := range ks {
						rows[k], _ = db.load(ctx, k)
					}
					return rows, nil
				})).c
			raw, ctx := srv.Client(t), context.Background()
			if err := c.MarkChanged(ctx, "p:1"); err != nil {
				t.Fatal(err)
			}
			synced := make(chan error, 1)
			go func() { // 1. the sync claims the id and reads its row (old)
				_, err := c.e.SyncOnce(ctx)
				synced <- err
			}()
			<-db.read
			db.update("new") // 2. the update commits, then the delete or set
			if err := tc.after(ctx, c, raw); err != nil {
				t.Fatal(err)
			}
			close(db.release) // 3. the sync's write arrives
			if err := <-synced; err != nil {
				t.Fatal(err)
			}
			got := "nothing"
			if b, err := raw.Get(ctx, "p:1").Bytes(); err == nil {
				var p profile
				if msgpack.Unmarshal(b, &p) != nil {
					t.Fatalf("Redis holds %q", b)
				}
				got = p.Name
			} else if !errors.Is(err, redis.Nil) {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("Redis holds %s after the sync, want %s", got, tc.want)
			}
			if tc.noLease {
				return
			}
			if v, err := c.Get(ctx, "p:1"); err != nil || v.Name != "new" {
				t.Errorf("a read after the sync = %+v, %v; want the new row", v, err)
			}
		})
	}
}

// fleet lists the fleet sizes TestAFleetLoadsAColdKeyOnce runs:
// go test -run 'TestAFleetLoadsAColdKeyOnce$' -v ./runtime/ -fleet 1,8,32,128
// prints what RELIABILITY.md reports.
var fleet = flag.String("fleet", "32", "the fleet sizes of TestAFleetLoadsAColdKeyOnce, comma-separated")

// A fleet's flash crowd onto one absent key (issue 49): n instances, each
// with its own client and 4 readers, read it at once while the loader
// takes 50 ms. The database is asked once or, when an instance's miss
// arrives just as the first load ends, twice; never once per instance.
// The slowest read's time is logged beside the load's.
func TestAFleetLoadsAColdKeyOnce(t *testing.T) {
	srv := redistest.Start(t)
	const readers, loadTime = 4, 50 * time.Millisecond
	for _, field := range strings.Split(*fleet, ",") {
		instances, err := strconv.Atoi(field)
		if err != nil {
			t.Fatalf("-fleet: %v", err)
		}
		for _, batch := range []bool{false, true} {
			key := "p:" + field + ":" + strconv.FormatBool(batch)
			var calls atomic.Int32
			row := func() *profile {
				calls.Add(1)
				time.Sleep(loadTime) // the database's time, not a wait for an event
				return sample(1, "ada")
			}
			loader := WithLoader(func(context.Context, string) (*profile, error) { return row(), nil })
			read := func(e *env) (*profile, error) { return e.c.Get(e.ctx, key) }
			if batch {
				loader = WithBatchLoader(func(_ context.Context, ks []string) (map[string]*profile, error) {
					return map[string]*profile{ks[0]: row()}, nil
				})
				read = func(e *env) (*profile, error) {
					vs, err := e.c.GetMany(e.ctx, []string{key})
					if err != nil {
						return nil, err
					}
					return vs[0], nil
				}
			}
			envs := make([]*env, instances)
			for i := range envs {
				envs[i] = newEnvOn(t, srv, loader)
				// A running instance's connections are dialled already,
				// one per reader: in the client's pool and in its pool of
				// pipelines (go-redis keeps one apart since v9.23), which
				// GetMany's reads and lease takes use. Cold, each of
				// GetMany's readers dials one, a HELLO at the node, and
				// the fleet's first MGETs came back after 27–53 ms.
				e := envs[i]
				e.put("warm", sample(0, "warm"))
				if _, err := e.c.Get(e.ctx, "warm"); err != nil {
					t.Fatal(err)
				}
				var warm sync.WaitGroup
				for range readers {
					warm.Go(func() {
						e.c.e.Client().Ping(e.ctx)
						e.c.e.Client().Pipelined(e.ctx, func(p redis.Pipeliner) error { return p.Ping(e.ctx).Err() })
					})
				}
				warm.Wait()
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			var slowest atomic.Int64
			for _, e := range envs {
				for range readers {
					wg.Go(func() {
						<-start
						t0 := time.Now()
						if v, err := read(e); err != nil || v == nil || v.Name != "ada" {
							t.Errorf("read = %+v, %v", v, err)
						}
						d := int64(time.Since(t0))
						for s := slowest.Load(); d > s && !slowest.CompareAndSwap(s, d); s = slowest.Load() {
						}
					})
				}
			}
			xreads := redistest.CommandStat(t, srv.Client(t), "xread", "calls")
			close(start)
			wg.Wait()
			for _, e := range envs {
				e.c.Close()
			}
			xreads = redistest.CommandStat(t, srv.Client(t), "xread", "calls") - xreads
			how := map[bool]string{false: "Get", true: "GetMany with a batch loader"}[batch]
			n := calls.Load()
			t.Logf("%s: %d instances × %d readers of one absent key: %d loader calls, %d blocked reads; the slowest read %v, the load %v",
				how, instances, readers, n, xreads, time.Duration(slowest.Load()).Round(100*time.Microsecond), loadTime)
			if n > 2 {
				t.Errorf("%s: %d instances × %d readers of one absent key called the loader %d times, want at most 2", how, instances, readers, n)
			}
			// Each instance waits on a lease once, whatever its readers
			// (twice when it meets the second load): the node's work does
			// not grow with the readers, nor with the pairs of instances.
			if xreads > 2*instances {
				t.Errorf("%s: %d instances × %d readers of one absent key blocked %d reads on the lease, want at most %d", how, instances, readers, xreads, 2*instances)
			}
		}
	}
}

// A lease whose holder died (a placeholder no process will end) holds the
// key until it expires, and then the waiting read loads the row itself:
// a crashed loader does not block the key.
func TestALeaseWhoseHolderDiedHandsOverWhenItExpires(t *testing.T) {
	tb := newTable(sample(1, "ada"))
	e := newEnv(t, WithLoader(tb.load), WithRebuildLockTTL(300*time.Millisecond))
	dead := lease.Keys{TTL: 300 * time.Millisecond}.New("p:1")
	if err := e.raw.Process(e.ctx, dead.Take(e.ctx)); !errors.Is(err, redis.Nil) {
		t.Fatalf("the dead holder's lease: %v", err)
	}
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("Get = %q", got.Name)
	}
	if n := tb.calls.Load(); n != 1 {
		t.Fatalf("loader called %d times, want 1", n)
	}
	if ttl := e.raw.PTTL(e.ctx, "p:1").Val(); ttl != -1 {
		t.Fatalf("the row written back expires in %v, want the entity's (none), not the lease's", ttl)
	}
}

// An absent row found by the lease's holder is absent for its waiters
// too, without null caching: they ask the database nothing more.
func TestWaitersOfAnAbsentRowAreAnsweredByItsHolder(t *testing.T) {
	srv := redistest.Start(t)
	tb := newTable()
	tb.gate = make(chan struct{})
	a := newEnvOn(t, srv, WithLoader(tb.load), WithNullTTL(0))
	b := newEnvOn(t, srv, WithLoader(tb.load), WithNullTTL(0))
	errs := make(chan error, 2)
	go func() { _, err := a.c.Get(a.ctx, "p:1"); errs <- err }()
	waitFor(t, "a's load to call the loader", func() bool { return tb.calls.Load() == 1 })
	go func() { _, err := b.c.Get(b.ctx, "p:1"); errs <- err }()
	redistest.WaitBlocked(t, a.raw, 1) // b waits on a's lease
	close(tb.gate)
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get = %v, want ErrNotFound", err)
		}
	}
	if n := tb.calls.Load(); n != 1 {
		t.Fatalf("the loader was called %d times, want once for both instances", n)
	}
	if n := a.raw.Exists(a.ctx, "p:1").Val(); n != 0 {
		t.Fatal("the lease's placeholder outlived its load")
	}
}

// A read that joins a load after the load took its lease may have begun
// after a delete that took the lease away: when the load's row was not
// written back, it reads again, and gets the row after the update. The
// read that started the load began before the delete, and may have the
// old row.
func TestAReadThatJoinedALostLoadReadsAgain(t *testing.T) {
	srv := redistest.Start(t)
	db := newSlowRow("old")
	e := newEnvOn(t, srv, WithLoader(db.load))
	first := make(chan *profile, 1)
	go func() {
		v, err := e.c.Get(e.ctx, "p:1")
		if err != nil {
			t.Error(err)
		}
		first <- v
	}()
	<-db.read // the load holds the lease and has read the old row
	db.update("new")
	if err := e.raw.Del(e.ctx, "p:1").Err(); err != nil { // another program's delete
		t.Fatal(err)
	}
	load, _ := e.c.e.InFlight("p:1")
	late := make(chan *profile, 1)
	go func() { // begun after the delete was acknowledged
		v, err := e.c.Get(e.ctx, "p:1")
		if err != nil {
			t.Error(err)
		}
		late <- v
	}()
	waitFor(t, "the late read to join the load", func() bool { f, _ := e.c.e.InFlight("p:1"); return f.Call == load.Call && f.Waiters == 2 })
	close(db.release)
	if v := <-first; v == nil {
		t.Fatal("the first read got nothing")
	}
	if v := <-late; v == nil || v.Name != "new" {
		t.Fatalf("the read begun after the delete got %+v, want the new row", v)
	}
}

// A take that Redis ran but whose answer never reached its caller (the
// caller's deadline passed first) may hold the key's lease: it is
// released, so that no other process's read waits the lease's TTL out
// (found by the checker's database phase: hot reads up to 3.6 s).
func TestATakeLeftUnansweredIsReleased(t *testing.T) {
	srv := redistest.Start(t)
	p, rdb := proxied(t, srv)
	tb := newTable(sample(1, "ada"))
	e := newEnvClient(t, srv, rdb, WithLoader(tb.load), WithRebuildLockTTL(time.Minute))
	if err := rdb.Ping(e.ctx).Err(); err != nil { // the pool's connection, dialled
		t.Fatal(err)
	}
	// The release's script, known to the server: its EVALSHA runs as it
	// arrives, whatever its reply's delay.
	if err := (lease.Keys{TTL: time.Minute}).New("warm").Release(e.ctx, e.raw, lease.Dropped); err != nil {
		t.Fatal(err)
	}
	// Requests pass, replies wait a second: past the caller's deadline,
	// within the client's ReadTimeout.
	if err := p.Slow(time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Heal() }) // before the Cache closes: its release's reply comes then
	ctx, cancel := context.WithTimeout(e.ctx, 100*time.Millisecond)
	defer cancel()
	if err := e.c.e.TakeLease(ctx, "p:1"); err == nil {
		t.Fatal("a take whose answer came after the caller's deadline succeeded")
	}
	waitFor(t, "the unanswered take's placeholder to be released", func() bool {
		return e.raw.Exists(e.ctx, "p:1").Val() == 0 // the raw client is not behind the proxy
	})
	if n := tb.calls.Load(); n != 0 {
		t.Fatalf("the loader was called %d times, want none: the take was never answered", n)
	}
}

// A Cache closed while its reader waits on another process's lease: the
// read returns ErrClosed, not the context of its load, and counts no
// Redis error.
func TestClosingWhileWaitingOnALeaseIsNoRedisError(t *testing.T) {
	srv := redistest.Start(t)
	db := holding()
	defer close(db.release)
	// The lease lasts far longer than Close may: Close must not wait for
	// it to end, nor for the wait blocked in Redis on it.
	const ttl = 20 * time.Second
	a := newEnvOn(t, srv, WithLoader(profileLoader(db)), WithRebuildLockTTL(ttl))
	b := newEnvOn(t, srv, WithLoader(profileLoader(db)), WithRebuildLockTTL(ttl))
	ctx := context.Background()
	go a.c.Get(ctx, "p:7")
	<-db.read // a holds the lease, and loads slowly
	errc := make(chan error, 1)
	go func() { _, err := b.c.Get(ctx, "p:7"); errc <- err }()
	redistest.WaitBlocked(t, srv.Client(t), 1) // b waits on a's lease
	if err := b.c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := srv.Client(t).Exists(ctx, "p:7").Val(); n != 1 {
		t.Errorf("Close returned once a's lease had expired (%v): it waited on it", ttl)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("a read waiting on a lease as its Cache closed returned %v, want ErrClosed", err)
	}
	if n := b.c.Stats().RedisErrors; n != 0 {
		t.Errorf("closing the Cache counted %d Redis errors, want 0", n)
	}
}

// The GetMany callers of one process that waited on another process's
// lease read the row it landed through the key's flight, as Get's
// callers do: none takes the lease again once the row is written (each
// did, before: a fleet's instances then read the row once per caller,
// 242–300 ms for a 50 ms load at 128 instances).
func TestGetManysWaitersReadALandedRowThroughOneFlight(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	db := holding()
	const ttl = 20 * time.Second // longer than any step of the test takes
	a := newEnvOn(t, srv, WithLoader(profileLoader(db)), WithRebuildLockTTL(ttl))
	b := newEnvOn(t, srv, WithRebuildLockTTL(ttl), WithBatchLoader(func(ctx context.Context, ks []string) (map[string]*profile, error) {
		t.Errorf("b loaded %v: it should have waited for a's row", ks)
		return nil, nil
	}))
	ctx := context.Background()
	go a.c.Get(ctx, "p:7")
	<-db.read // a holds the lease, and loads slowly
	const readers = 4
	got := make(chan string, readers)
	takes := commandCalls(t, admin, "set") // a's
	for range readers {
		go func() { name, _ := getManyOf(b)(ctx, 7); got <- name }()
	}
	// Each of b's readers took, found a's lease and waits: on one read.
	waitFor(t, "b's readers to find a's lease", func() bool { return commandCalls(t, admin, "set") == takes+readers })
	redistest.WaitBlocked(t, admin, 1)
	before := commandCalls(t, admin, "set")
	close(db.release)
	for range readers {
		if name := <-got; name != "row 7" {
			t.Fatalf("b read %q, want a's row", name)
		}
	}
	if n := commandCalls(t, admin, "set") - before; n != 1 {
		t.Errorf("%d SETs after a's row landed, want 1 (the landing's own): b's readers took the lease again", n)
	}
}
