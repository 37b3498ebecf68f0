package changes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	lease = time.Minute
	ttl   = 10 * time.Minute
)

// env is a Buffer of the entity "user" over a private redis-server, on a
// manual clock, with a client of its own to look at the keys.
type env struct {
	t     *testing.T
	ctx   context.Context
	clock *fakeclock.Clock
	raw   redis.UniversalClient
	b     *Buffer
}

func newEnv(t *testing.T) *env {
	srv := redistest.Start(t)
	return newEnvOn(t, srv.Client(t), srv.Client(t))
}

func newEnvOn(t *testing.T, rdb, raw redis.UniversalClient) *env {
	clock := fakeclock.New(epoch)
	return &env{t: t, ctx: context.Background(), clock: clock, raw: raw,
		b: New(rdb, "user", Options{Lease: lease, TTL: ttl, Clock: clock})}
}

func (e *env) mark(ids ...string) {
	e.t.Helper()
	if err := e.b.Mark(e.ctx, ids); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) claim(n int) Claim {
	e.t.Helper()
	cl, err := e.b.Claim(e.ctx, n)
	if err != nil {
		e.t.Fatal(err)
	}
	return cl
}

func (e *env) settle(cl Claim, release bool, ids ...string) int {
	e.t.Helper()
	n, err := e.b.Settle(e.ctx, cl, ids, release)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// set returns the members of key with their scores as times, oldest
// first, as "id@offset from epoch".
func (e *env) set(key string) []string {
	e.t.Helper()
	zs, err := e.raw.ZRangeWithScores(e.ctx, key, 0, -1).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	out := []string{}
	for _, z := range zs {
		out = append(out, fmt.Sprintf("%s@%v", z.Member, time.UnixMilli(int64(z.Score)).Sub(epoch)))
	}
	return out
}

func (e *env) want(key string, want ...string) {
	e.t.Helper()
	if got := e.set(key); !slices.Equal(got, want) {
		e.t.Errorf("%s holds %q, want %q", key, got, want)
	}
}

// TestKeys: the keys live in Redis, where instances of every version of a
// program meet; they never change.
func TestKeys(t *testing.T) {
	buf, claims := Keys("user")
	if buf != "hotkeygen:changes:{user}" || claims != "hotkeygen:changes:{user}:claims" {
		t.Errorf("Keys(user) = %q, %q", buf, claims)
	}
}

// TestMarkKeepsTheFirstMark: an id marked again while it waits keeps the
// time of its first mark, and so its place in line; every mark renews the
// buffer's expiry, and marking nothing writes nothing.
func TestMarkKeepsTheFirstMark(t *testing.T) {
	e := newEnv(t)
	buf, _ := Keys("user")
	e.mark()
	if n, err := e.raw.Exists(e.ctx, buf).Result(); err != nil || n != 0 {
		t.Fatalf("marking nothing made the buffer (%d, %v)", n, err)
	}
	e.mark("a", "b")
	e.clock.Advance(time.Second)
	e.mark("b", "c")
	e.want(buf, "a@0s", "b@0s", "c@1s")
	if d, err := e.raw.PTTL(e.ctx, buf).Result(); err != nil || d <= ttl-10*time.Second || d > ttl {
		t.Errorf("the buffer expires in %v (%v), want about %v", d, err, ttl)
	}
}

// TestMarkManyInChunks: a huge mark is sent as ZADDs of markChunk ids at
// most, all in one pipeline.
func TestMarkManyInChunks(t *testing.T) {
	e := newEnv(t)
	buf, _ := Keys("user")
	ids := make([]string, 2*markChunk+5)
	for i := range ids {
		ids[i] = "u" + strconv.Itoa(i)
	}
	if err := e.raw.ConfigResetStat(e.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	e.mark(ids...)
	if n, err := e.raw.ZCard(e.ctx, buf).Result(); err != nil || n != int64(len(ids)) {
		t.Errorf("the buffer holds %d ids (%v), want %d", n, err, len(ids))
	}
	if n := redistest.CommandStat(t, e.raw, "zadd", "calls"); n != 3 {
		t.Errorf("%d ZADDs for %d ids, want 3", n, len(ids))
	}
}

// TestClaimTakesTheOldest: a claim takes the oldest ids, moves them to
// the claims with its deadline, renews both keys' expiry and refreshes the
// gauges; a claim of an empty buffer takes nothing.
func TestClaimTakesTheOldest(t *testing.T) {
	e := newEnv(t)
	buf, claims := Keys("user")
	for _, id := range []string{"a", "b", "c"} {
		e.mark(id)
		e.clock.Advance(time.Second)
	}
	e.clock.Advance(2 * time.Second) // now 5s
	cl := e.claim(2)
	if !slices.Equal(cl.IDs, []string{"a", "b"}) {
		t.Fatalf("claimed %q, want the oldest two", cl.IDs)
	}
	e.want(buf, "c@2s")
	e.want(claims, "a@1m5s", "b@1m5s")
	for _, k := range []string{buf, claims} {
		if d, err := e.raw.PTTL(e.ctx, k).Result(); err != nil || d <= ttl-10*time.Second || d > ttl {
			t.Errorf("%s expires in %v (%v), want about %v", k, d, err, ttl)
		}
	}
	if st := e.b.Stats(); st.Pending != 1 || st.OldestAge != 3*time.Second {
		t.Errorf("after the claim: %+v, want 1 pending, marked 3s ago", st)
	}
	if cl.Lapsed(e.clock.Now()) || !cl.Lapsed(e.clock.Now().Add(lease)) {
		t.Error("a claim must hold for its lease, and lapse at its end")
	}
	if cl := e.claim(10); !slices.Equal(cl.IDs, []string{"c"}) {
		t.Fatalf("claimed %q, want the one left", cl.IDs)
	}
	if cl := e.claim(10); len(cl.IDs) != 0 {
		t.Fatalf("claimed %q of an empty buffer", cl.IDs)
	}
	if st := e.b.Stats(); st.Pending != 0 || st.OldestAge != 0 {
		t.Errorf("with nothing waiting: %+v", st)
	}
}

// TestMarkWhileClaimed: an id marked while a worker holds it waits again,
// no other worker takes it while the claim holds, and the acknowledgement
// removes only the claim: the id is synced again, after its last mark.
func TestMarkWhileClaimed(t *testing.T) {
	e := newEnv(t)
	buf, claims := Keys("user")
	e.mark("a")
	held := e.claim(10)
	e.clock.Advance(time.Second)
	e.mark("a")
	if cl := e.claim(10); len(cl.IDs) != 0 {
		t.Fatalf("a second worker claimed %q while the first held it", cl.IDs)
	}
	if n := e.settle(held, false, "a"); n != 1 {
		t.Fatalf("the acknowledgement settled %d ids, want 1", n)
	}
	e.want(claims)
	e.want(buf, "a@1s")
	if cl := e.claim(10); !slices.Equal(cl.IDs, []string{"a"}) {
		t.Fatalf("claimed %q after the acknowledgement, want a again", cl.IDs)
	}
}

// TestCrashedClaimer: a worker that dies holding a claim keeps its ids
// from the others until the lease ends; then the next claim returns them
// to the buffer, at the time of the dead claim, ahead of later marks, and
// takes them. The dead worker, should it come back, settles nothing: its
// deadline is no longer the claim's.
func TestCrashedClaimer(t *testing.T) {
	e := newEnv(t)
	buf, claims := Keys("user")
	e.mark("a", "b")
	dead := e.claim(2)
	e.clock.Advance(time.Second)
	e.mark("x", "a") // a waits again, at 1s
	e.clock.Advance(lease - time.Second - time.Millisecond)
	if cl := e.claim(10); !slices.Equal(cl.IDs, []string{"x"}) {
		t.Fatalf("claimed %q a millisecond before the lease ends, want x alone", cl.IDs)
	} else if n := e.settle(cl, false, "x"); n != 1 {
		t.Fatalf("settled %d, want 1", n)
	}
	e.mark("y")
	e.clock.Advance(time.Millisecond) // the lease ends
	next := e.claim(1)
	if !slices.Equal(next.IDs, []string{"a"}) {
		t.Fatalf("claimed %q as the lease ended, want a, first in line", next.IDs)
	}
	e.want(buf, "b@0s", "y@59.999s")
	e.want(claims, "a@2m0s")
	if st := e.b.Stats(); st.ClaimsExpired != 2 || st.Pending != 2 {
		t.Errorf("after the lapse: %+v, want 2 claims expired, 2 pending", st)
	}
	if n := e.settle(dead, false, "a", "b"); n != 0 {
		t.Errorf("the dead worker's acknowledgement settled %d ids, want 0", n)
	}
	if n := e.settle(dead, true, "a", "b"); n != 0 {
		t.Errorf("the dead worker's release settled %d ids, want 0", n)
	}
	e.want(buf, "b@0s", "y@59.999s")
	e.want(claims, "a@2m0s")
	if n := e.settle(next, false, "a"); n != 1 {
		t.Errorf("the live worker's acknowledgement settled %d ids, want 1", n)
	}
	e.want(claims)
}

// TestRelease: a failed batch returns its ids to the buffer at the time
// they were claimed, ahead of the ids marked since, even one of its own
// marked again meanwhile.
func TestRelease(t *testing.T) {
	e := newEnv(t)
	buf, claims := Keys("user")
	e.mark("a", "b")
	e.clock.Advance(time.Second)
	cl := e.claim(2)
	e.clock.Advance(time.Second)
	e.mark("c", "b")
	if n := e.settle(cl, true, "a", "b"); n != 2 {
		t.Fatalf("the release settled %d ids, want 2", n)
	}
	e.want(claims)
	e.want(buf, "a@1s", "b@1s", "c@2s")
	if n := e.settle(cl, true, "a"); n != 0 {
		t.Errorf("a second release settled %d ids, want 0", n)
	}
	if n := e.settle(cl, false); n != 0 {
		t.Errorf("settling no ids settled %d", n)
	}
}

// TestReturnKeepsAnEarlierMark: an id that returns to the buffer, by a
// release or a lapse, while it waits again from a mark dated before its
// claim (a marker whose clock is behind) keeps the earlier time.
func TestReturnKeepsAnEarlierMark(t *testing.T) {
	e := newEnv(t)
	buf, _ := Keys("user")
	behind := New(e.raw, "user", Options{Lease: lease, TTL: ttl, Clock: fakeclock.New(epoch.Add(-time.Minute))})
	e.clock.Advance(time.Second)
	e.mark("a", "b")
	cl := e.claim(2)
	if err := behind.Mark(e.ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	e.settle(cl, true, "a")
	e.clock.Advance(lease)
	e.claim(0) // b's claim lapses
	e.want(buf, "a@-1m0s", "b@-1m0s")
}

// TestLapsedClaimsInBoundedSteps: one claim returns at most
// maxExpiredPerClaim lapsed claims, so its script stays short whatever
// died; the next returns the rest.
func TestLapsedClaimsInBoundedSteps(t *testing.T) {
	e := newEnv(t)
	ids := make([]string, maxExpiredPerClaim+1)
	for i := range ids {
		ids[i] = "u" + strconv.Itoa(i)
	}
	e.mark(ids...)
	if cl := e.claim(len(ids)); len(cl.IDs) != len(ids) {
		t.Fatalf("claimed %d ids, want %d", len(cl.IDs), len(ids))
	}
	e.clock.Advance(lease)
	e.claim(0)
	if st := e.b.Stats(); st.ClaimsExpired != maxExpiredPerClaim || st.Pending != maxExpiredPerClaim {
		t.Errorf("after one claim: %+v, want %d lapsed and pending", st, maxExpiredPerClaim)
	}
	e.claim(0)
	if st := e.b.Stats(); st.ClaimsExpired != uint64(len(ids)) || st.Pending != int64(len(ids)) {
		t.Errorf("after two claims: %+v, want %d lapsed and pending", st, len(ids))
	}
}

// TestManyClaimers: workers claim and acknowledge while ids are marked,
// some again while held; no id is held by two workers at once, and once
// the marks stop, the workers empty the buffer. On a cluster too: the two
// keys share a slot.
func TestManyClaimers(t *testing.T) {
	for _, topo := range []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{"single", newEnv},
		{"cluster", func(t *testing.T) *env {
			cl := redistest.StartCluster(t, 3)
			return newEnvOn(t, cl.Client(t), cl.Client(t))
		}},
	} {
		t.Run(topo.name, func(t *testing.T) {
			e := topo.env(t)
			buf, claims := Keys("user")
			var (
				mu       sync.Mutex
				inflight = map[string]bool{}
				marking  = true
			)
			var workers sync.WaitGroup
			for range 4 {
				workers.Go(func() {
					for {
						cl, err := e.b.Claim(e.ctx, 5)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						done := len(cl.IDs) == 0 && !marking
						for _, id := range cl.IDs {
							if inflight[id] {
								t.Errorf("%s is held by two workers at once", id)
							}
							inflight[id] = true
						}
						mu.Unlock()
						if done {
							return
						}
						time.Sleep(100 * time.Microsecond)
						mu.Lock()
						for _, id := range cl.IDs {
							delete(inflight, id)
						}
						mu.Unlock()
						if n, err := e.b.Settle(e.ctx, cl, cl.IDs, false); err != nil || n != len(cl.IDs) {
							t.Errorf("settled %d of %d (%v)", n, len(cl.IDs), err)
							return
						}
						e.b.CountSynced(len(cl.IDs))
					}
				})
			}
			for r := range 50 {
				batch := make([]string, 10)
				for i := range batch {
					batch[i] = "u" + strconv.Itoa((r*7+i*13)%120)
				}
				e.mark(batch...)
				e.clock.Advance(time.Millisecond)
			}
			mu.Lock()
			marking = false
			mu.Unlock()
			workers.Wait()
			e.want(buf)
			e.want(claims)
			if st := e.b.Stats(); st.Synced < 120 || st.ClaimsExpired != 0 {
				t.Errorf("%+v, want at least the 120 ids synced and no claim lapsed", st)
			}
		})
	}
}

// TestStatsCounts: the counters the sync worker adds to, and the rate of
// ids synced, are in Stats.
func TestStatsCounts(t *testing.T) {
	e := newEnv(t)
	e.b.SampleRate()
	e.b.CountSynced(10)
	e.b.CountSynced(4)
	e.b.CountFailure()
	e.b.CountDropped(3)
	e.clock.Advance(2 * time.Second)
	e.b.SampleRate()
	want := Stats{Synced: 14, SyncedPerSec: 7, Failures: 1, Dropped: 3}
	if st := e.b.Stats(); st != want {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
}
