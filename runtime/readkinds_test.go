package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// readKind is one kind of read a repository offers, over an entity whose
// rows are named by id: the read of id's name, on a Cache (or a
// Collection) made on srv with opts and a loader (or a batch loader) of
// rows, named "row <id>", absent for ids above 100, whose calls db
// counts and may hold.
type readKind struct {
	name string
	make func(t *testing.T, srv *redistest.Server, db *rows, opts ...Option) kindReader
}

// kindReader reads id's name (read), tells whether its Cache holds a
// copy of id's key that it serves without asking Redis (local), and gives
// its Cache's Stats.
type kindReader struct {
	read  func(ctx context.Context, id int) (string, error)
	local func(id int) bool
	stats func() Stats
}

// profileReader is e's kindReader, reading through read.
func profileReader(e *env, read func(context.Context, int) (string, error)) kindReader {
	return kindReader{read, func(id int) bool { return servesLocally(e.c.e, "p:"+strconv.Itoa(id)) }, e.c.Stats}
}

// rows stands for the database the loaders read: calls counts their
// calls, and the first, with hold set, waits until release is closed,
// as a slow query, once it has closed read.
type rows struct {
	calls         atomic.Int32
	hold          bool
	read, release chan struct{}
}

// holding returns rows whose first load waits for release.
func holding() *rows {
	return &rows{hold: true, read: make(chan struct{}), release: make(chan struct{})}
}

// load is one loader call of row id.
func (db *rows) load(id int) (string, bool) {
	if db.calls.Add(1) == 1 && db.hold {
		close(db.read)
		<-db.release
	}
	return rowOf(id)
}

func rowOf(id int) (string, bool) { return "row " + strconv.Itoa(id), id <= 100 }

// readKinds are Get, View, GetMany (with the loader and with a batch
// loader) and a collection's HGet: each option of the read path holds for
// every one of them.
var readKinds = []readKind{
	{"Get", func(t *testing.T, srv *redistest.Server, db *rows, opts ...Option) kindReader {
		e := newEnvOn(t, srv, append(opts, WithLoader(profileLoader(db)))...)
		return profileReader(e, func(ctx context.Context, id int) (string, error) {
			v, err := e.c.Get(ctx, "p:"+strconv.Itoa(id))
			if err != nil {
				return "", err
			}
			return v.Name, nil
		})
	}},
	{"View", func(t *testing.T, srv *redistest.Server, db *rows, opts ...Option) kindReader {
		e := newEnvOn(t, srv, append(opts, WithLoader(profileLoader(db)))...)
		return profileReader(e, func(ctx context.Context, id int) (name string, err error) {
			err = e.c.View(ctx, "p:"+strconv.Itoa(id), func(v *profile) error { name = v.Name; return nil })
			return name, err
		})
	}},
	{"GetMany", func(t *testing.T, srv *redistest.Server, db *rows, opts ...Option) kindReader {
		e := newEnvOn(t, srv, append(opts, WithLoader(profileLoader(db)))...)
		return profileReader(e, getManyOf(e))
	}},
	{"GetMany with a batch loader", func(t *testing.T, srv *redistest.Server, db *rows, opts ...Option) kindReader {
		one := profileLoader(db)
		e := newEnvOn(t, srv, append(opts, WithBatchLoader(func(ctx context.Context, ks []string) (map[string]*profile, error) {
			rows := map[string]*profile{}
			for _, k := range ks {
				if v, err := one(ctx, k); err == nil {
					rows[k] = v
				}
			}
			return rows, nil
		}))...)
		return profileReader(e, getManyOf(e))
	}},
	{"HGet", func(t *testing.T, srv *redistest.Server, db *rows, opts ...Option) kindReader {
		later := time.Now().Add(time.Hour)
		e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue, append(opts, WithCollectionLoader(func(_ context.Context, k loginOwner) (map[string]*login, error) {
			if _, ok := db.load(int(k.User)); !ok {
				return nil, fmt.Errorf("no row %d: %w", k.User, ErrNotFound)
			}
			// The row is one item, its token its field; its name its user's.
			return map[string]*login{"t": {User: k.User, Platform: k.Platform, Token: "t", ExpiresAt: later}}, nil
		}))...)
		read := func(ctx context.Context, id int) (string, error) {
			v, err := e.c.HGet(ctx, loginOwner{int64(id), "web"}, "t")
			if err != nil {
				return "", err
			}
			name, _ := rowOf(int(v.User))
			return name, nil
		}
		return kindReader{read, func(id int) bool { return servesLocally(e.c.e.Cache(), loginOwner{int64(id), "web"}) }, e.c.Stats}
	}},
}

// profileLoader loads "p:<id>" rows of db.
func profileLoader(db *rows) func(context.Context, string) (*profile, error) {
	return func(_ context.Context, key string) (*profile, error) {
		id, _ := strconv.Atoi(key[len("p:"):])
		name, ok := db.load(id)
		if !ok {
			return nil, ErrNotFound
		}
		return sample(int64(id), name), nil
	}
}

// getManyOf reads one id through e's GetMany.
func getManyOf(e *env) func(context.Context, int) (string, error) {
	return func(ctx context.Context, id int) (string, error) {
		vs, err := e.c.GetMany(ctx, []string{"p:" + strconv.Itoa(id)})
		switch {
		case err != nil:
			return "", err
		case vs[0] == nil:
			return "", ErrNotFound
		}
		return vs[0].Name, nil
	}
}

// Every read is counted once by its outcome, whichever kind of read it
// is: the counts add up to Reads after each step, and each step's read
// counts as the outcome it had (a collection's HGet of a missing owner
// reads the item, then the owner: two reads).
func TestEveryReadKindCountsItsOutcome(t *testing.T) {
	for _, kind := range readKinds {
		t.Run(kind.name, func(t *testing.T) {
			srv := redistest.Start(t)
			r := kind.make(t, srv, &rows{})
			ctx := context.Background()
			steps := []struct {
				what string
				id   int
				want func(o ReadOutcomes) uint64
				err  bool
			}{
				{"a row Redis lacks, loaded", 1, func(o ReadOutcomes) uint64 { return o.Loaded }, false},
				{"the same row, in Redis now", 1, func(o ReadOutcomes) uint64 { return o.Redis }, false},
				{"an absent row, loaded", 101, func(o ReadOutcomes) uint64 { return o.Loaded }, true},
				{"a caller that stopped waiting", 3, func(o ReadOutcomes) uint64 { return o.Canceled }, true},
				{"Redis killed", 2, func(o ReadOutcomes) uint64 { return o.Failed + o.FailedFast }, true},
			}
			for _, step := range steps {
				if step.what == "Redis killed" {
					srv.Kill()
				}
				before := r.stats().Outcomes
				ctx := ctx
				if step.what == "a caller that stopped waiting" {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					cancel()
				}
				if _, err := r.read(ctx, step.id); (err != nil) != step.err {
					t.Fatalf("%s: read %d: %v", step.what, step.id, err)
				}
				st := r.stats()
				o := st.Outcomes
				if sum := o.Local + o.Redis + o.Loaded + o.Stale + o.FailedFast + o.Failed + o.Canceled; sum != st.Reads {
					t.Fatalf("%s: outcomes %+v add up to %d, Reads = %d", step.what, o, sum, st.Reads)
				}
				if step.want(o) != step.want(before)+1 {
					t.Errorf("%s: outcomes went from %+v to %+v; want one more of the step's", step.what, before, o)
				}
				if step.what != "Redis killed" && o.Failed+o.FailedFast != 0 {
					t.Errorf("%s: failures counted: %+v", step.what, o)
				}
			}
		})
	}
}

// degrade=loader, with Redis killed: a cold read of every kind comes
// from the loader, an absent row is ErrNotFound, and degrade=off fails
// with Redis's error, the loader untouched. (Issue 49: GetMany answered
// Redis unavailable, 0 of 3 ids from the loader.)
func TestEveryReadKindDegradesToTheLoaderWhenRedisFails(t *testing.T) {
	for _, kind := range readKinds {
		t.Run(kind.name, func(t *testing.T) {
			for _, degrade := range []string{DegradeLoader, DegradeOff} {
				srv := redistest.Start(t)
				db := &rows{}
				read := kind.make(t, srv, db, WithDegrade(degrade)).read
				srv.Kill()
				ctx := context.Background()
				for _, id := range []int{1, 2, 3} {
					name, err := read(ctx, id)
					want, _ := rowOf(id)
					switch {
					case degrade == DegradeLoader && (err != nil || name != want):
						t.Errorf("degrade=loader, Redis killed: read %d = %q, %v; want %q from the loader", id, name, err, want)
					case degrade == DegradeOff && (err == nil || errors.Is(err, ErrNotFound)):
						t.Errorf("degrade=off, Redis killed: read %d = %q, %v; want Redis's error", id, name, err)
					}
				}
				if n := db.calls.Load(); degrade == DegradeOff && n != 0 {
					t.Errorf("degrade=off called the loader %d times with Redis killed", n)
				}
				if _, err := read(ctx, 101); degrade == DegradeLoader && !errors.Is(err, ErrNotFound) {
					t.Errorf("degrade=loader, an absent row: %v, want ErrNotFound", err)
				}
			}
		})
	}
}

// null_ttl: an absent row is remembered, so three reads of it ask the
// loader once, whichever kind of read; with null_ttl=0, each read asks.
func TestEveryReadKindRemembersAnAbsentRow(t *testing.T) {
	for _, kind := range readKinds {
		t.Run(kind.name, func(t *testing.T) {
			for _, tc := range []struct {
				opts  []Option
				calls int
			}{{nil, 1}, {[]Option{WithNullTTL(0)}, 3}} {
				srv := redistest.Start(t)
				db := &rows{}
				read := kind.make(t, srv, db, tc.opts...).read
				for range 3 {
					if name, err := read(context.Background(), 101); !errors.Is(err, ErrNotFound) {
						t.Fatalf("an absent row read as %q, %v; want ErrNotFound", name, err)
					}
				}
				if n := int(db.calls.Load()); n != tc.calls {
					t.Errorf("3 reads of an absent row (options %d) called the loader %d times, want %d", len(tc.opts), n, tc.calls)
				}
			}
		})
	}
}

// rebuild_lock: two instances read one absent row at once, the first's
// load slow; the second waits on the first's lease, blocked in Redis, and
// both return the row from one loader call, whichever kind of read; with
// rebuild_lock=off, the second loads it too.
func TestEveryReadKindLoadsOncePerFleet(t *testing.T) {
	for _, kind := range readKinds {
		t.Run(kind.name, func(t *testing.T) {
			for _, lease := range []bool{true, false} {
				srv := redistest.Start(t)
				db := holding()
				a := kind.make(t, srv, db, WithRebuildLock(lease)).read
				b := kind.make(t, srv, db, WithRebuildLock(lease)).read
				ctx := context.Background()
				got := make(chan string, 2)
				read := func(read func(context.Context, int) (string, error)) {
					name, err := read(ctx, 7)
					if err != nil {
						name = err.Error()
					}
					got <- name
				}
				go read(a)
				<-db.read // a's load holds the lease, and waits
				go read(b)
				if lease {
					redistest.WaitBlocked(t, srv.Client(t), 1) // b waits on a's lease
				} else {
					for db.calls.Load() < 2 { // b loads on its own
						time.Sleep(time.Millisecond)
					}
				}
				close(db.release)
				want, _ := rowOf(7)
				for range 2 {
					if name := <-got; name != want {
						t.Errorf("rebuild_lock=%v: a read returned %q, want %q", lease, name, want)
					}
				}
				if n, want := db.calls.Load(), map[bool]int32{true: 1, false: 2}[lease]; n != want {
					t.Errorf("rebuild_lock=%v: two instances' reads called the loader %d times, want %d", lease, n, want)
				}
			}
		})
	}
}

// stale_reads: with Redis killed, a hot key is served from its copy by
// every kind of read; with stale_reads=off every read of it fails, with
// ErrUnavailable once the breaker has opened. The loader is asked for
// nothing either way (degrade=off).
func TestEveryReadKindServesAHotKeyThroughAnOutageUnlessStaleReadsIsOff(t *testing.T) {
	for _, kind := range readKinds {
		t.Run(kind.name, func(t *testing.T) {
			for _, stale := range []bool{true, false} {
				srv := redistest.Start(t)
				db := &rows{}
				r := kind.make(t, srv, db, WithInvalidate(InvalidateTracking), WithStaleReads(stale))
				ctx := context.Background()
				want, _ := rowOf(1)
				waitFor(t, "row 1 hot, and served from memory", func() bool {
					if name, err := r.read(ctx, 1); err != nil || name != want {
						t.Fatalf("reading row 1 before the outage: %q, %v", name, err)
					}
					return r.local(1)
				})
				calls := db.calls.Load()
				srv.Kill()
				waitFor(t, "the session's loss, which unverifies the copy", func() bool { return !r.local(1) })
				for i := range 20 {
					name, err := r.read(ctx, 1)
					switch {
					case stale && (err != nil || name != want):
						t.Fatalf("stale_reads on, Redis killed: hot read %d = %q, %v; want %q from memory", i, name, err, want)
					case !stale && (err == nil || errors.Is(err, ErrNotFound) || i > 0 && !errors.Is(err, ErrUnavailable)):
						t.Fatalf("stale_reads off, Redis killed: hot read %d = %q, %v; want it to fail, with ErrUnavailable after the first", i, name, err)
					}
				}
				if n := db.calls.Load(); n != calls {
					t.Errorf("stale_reads=%v: the outage called the loader %d times, want 0", stale, n-calls)
				}
			}
		})
	}
}
