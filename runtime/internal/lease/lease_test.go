package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// take sends l's Take and returns what the key held: nil when l was taken.
func take(t *testing.T, rdb redis.UniversalClient, l Lease) []byte {
	t.Helper()
	cmd := l.Take(context.Background())
	if err := rdb.Process(context.Background(), cmd); errors.Is(err, redis.Nil) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	b, _ := cmd.Bytes()
	return b
}

// The lease's rules, step by step on one key, as two processes (a and b)
// and a writer that knows nothing of leases see them.
func TestALeaseIsTheOnlyWayBackForALoadsRow(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// between runs after a takes the lease and before a fills it.
		between    func(rdb *redis.Client)
		wantLanded bool
		wantKey    string // what the key holds after a's fill; "" none
		wantEnd    string // the outcome b's Wait, begun after a's fill, reads
	}{
		{"nothing happens meanwhile: the row lands", func(*redis.Client) {}, true, "row", Gone},
		{"a delete meanwhile: the row does not land, the key stays absent", func(rdb *redis.Client) { rdb.Del(ctx, "k") }, false, "", Gone},
		{"a set meanwhile: the row does not land, the set's value stays", func(rdb *redis.Client) { rdb.Set(ctx, "k", "new", 0) }, false, "new", Gone},
		{"a delete and another's lease meanwhile: the row does not land on it", func(rdb *redis.Client) {
			rdb.Del(ctx, "k")
			if held := take(t, rdb, Keys{TTL: time.Minute}.New("k")); held != nil {
				t.Fatalf("the next lease found %q", held)
			}
		}, false, "lease", Gone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := redistest.Start(t).Client(t)
			a := Keys{TTL: time.Minute}.New("k")
			if held := take(t, rdb, a); held != nil {
				t.Fatalf("a found %q on an absent key, want the lease", held)
			}
			held := take(t, rdb, Keys{TTL: time.Minute}.New("k"))
			b, ok := Keys{TTL: time.Minute}.Found("k", held)
			if !ok {
				t.Fatalf("b found %q, want a's lease", held)
			}
			if got := rdb.Get(ctx, "k").Val(); !Is([]byte(got)) {
				t.Fatalf("the key holds %q, want a placeholder", got)
			}
			if ttl := rdb.PTTL(ctx, "k").Val(); ttl <= 0 || ttl > time.Minute {
				t.Fatalf("the placeholder expires in %v, want within the lease's minute", ttl)
			}
			tc.between(rdb)
			landed, err := a.Fill(ctx, rdb, []byte("row"), time.Hour)()
			if err != nil || landed != tc.wantLanded || !a.Ended() {
				t.Fatalf("a's fill: landed %v, %v, ended %v; want landed %v", landed, err, a.Ended(), tc.wantLanded)
			}
			got, err := rdb.Get(ctx, "k").Result()
			switch {
			case tc.wantKey == "" && !errors.Is(err, redis.Nil):
				t.Fatalf("the key holds %q, %v; want nothing", got, err)
			case tc.wantKey == "lease" && !Is([]byte(got)):
				t.Fatalf("the key holds %q, want the next lease's placeholder", got)
			case tc.wantKey != "" && tc.wantKey != "lease" && got != tc.wantKey:
				t.Fatalf("the key holds %q, want %q", got, tc.wantKey)
			}
			if tc.wantLanded {
				if ttl := rdb.PTTL(ctx, "k").Val(); ttl <= time.Minute || ttl > time.Hour {
					t.Fatalf("the row expires in %v, want the row's hour", ttl)
				}
			}
			if end, err := b.Wait(ctx, rdb, time.Now()); err != nil || end != tc.wantEnd {
				t.Fatalf("b's wait = %q, %v; want %q", end, err, tc.wantEnd)
			}
		})
	}
}

// A waiter blocked before the holder ends wakes when it does, with the
// holder's outcome, however it ends; a release of a lease the key no
// longer holds leaves the key alone; and nothing of the wait outlives the
// lease's TTL.
func TestAWaiterWakesWhenTheHolderEnds(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		end  func(rdb *redis.Client, a *Lease) error
		want string
	}{
		{"the row lands", func(rdb *redis.Client, a *Lease) error {
			_, err := a.Fill(ctx, rdb, []byte("row"), 0)()
			return err
		}, Landed},
		{"a delete took the key first", func(rdb *redis.Client, a *Lease) error {
			rdb.Del(ctx, "k")
			_, err := a.Fill(ctx, rdb, []byte("row"), 0)()
			return err
		}, Lost},
		{"the row is absent", func(rdb *redis.Client, a *Lease) error { return a.Release(ctx, rdb, Absent) }, Absent},
		{"the load failed", func(rdb *redis.Client, a *Lease) error { return a.Release(ctx, rdb, Dropped) }, Dropped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := redistest.Start(t).Client(t)
			a := Keys{TTL: time.Minute}.New("k")
			take(t, rdb, a)
			b, _ := Keys{TTL: time.Minute}.Found("k", take(t, rdb, Keys{TTL: time.Minute}.New("k")))
			woke := make(chan string, 2)
			wait := func() {
				end, err := b.Wait(ctx, rdb, time.Now())
				if err != nil {
					t.Error(err)
				}
				woke <- end
			}
			// Two waiters, the second's start (which wakes the first
			// with no entry) before the end.
			go wait()
			redistest.WaitBlocked(t, rdb, 1)
			go wait()
			redistest.WaitBlocked(t, rdb, 2)
			if err := tc.end(rdb, &a); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if end := <-woke; end != tc.want {
					t.Fatalf("a waiter woke with %q, want %q", end, tc.want)
				}
			}
			if ttl := rdb.PTTL(ctx, b.done).Val(); ttl <= 0 || ttl > time.Minute {
				t.Fatalf("the stream expires in %v, want within the lease's minute", ttl)
			}
			if tc.want == Landed {
				return
			}
			rdb.Set(ctx, "k", "new", 0)
			if err := a.Release(ctx, rdb, Dropped); err != nil || rdb.Get(ctx, "k").Val() != "new" {
				t.Fatalf("a late release touched the key: %v, %q", err, rdb.Get(ctx, "k").Val())
			}
		})
	}
}

// A load nobody waited for leaves nothing behind but its row: no stream.
func TestALoadNobodyWaitedForLeavesOnlyItsRow(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	a := Keys{TTL: time.Minute}.New("k")
	take(t, rdb, a)
	if landed, err := a.Fill(ctx, rdb, []byte("row"), 0)(); !landed || err != nil {
		t.Fatalf("fill: %v, %v", landed, err)
	}
	if keys := rdb.Keys(ctx, "*").Val(); len(keys) != 1 || keys[0] != "k" {
		t.Fatalf("Redis holds %q, want the row's key alone", keys)
	}
}

// A lease whose holder died ends with nothing written: a waiter waits
// until it expires, and no longer, then takes the key's next lease.
func TestADeadHoldersLeaseExpires(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	const ttl = 300 * time.Millisecond
	take(t, rdb, Keys{TTL: ttl}.New("k")) // its holder dies
	found := time.Now()
	b, ok := Keys{TTL: ttl}.Found("k", take(t, rdb, Keys{TTL: ttl}.New("k")))
	if !ok {
		t.Fatal("no lease found")
	}
	if end, err := b.Wait(ctx, rdb, found); err != nil || end != Expired {
		t.Fatalf("wait = %q, %v; want %q", end, err, Expired)
	}
	if held := take(t, rdb, Keys{TTL: ttl}.New("k")); held != nil {
		t.Fatalf("after the wait the key holds %q, want it free to lease", held)
	}
}

// On a cluster, a lease's stream shares its key's hash slot, so that the
// fill's script may touch both; a key whose braces make no hash tag has
// no stream, and its waiters wait the lease out.
func TestTheStreamSharesTheKeysSlot(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"user:1", "{user:1}\xc1done:t"},
		{"user:{7}:1", "user:{7}:1\xc1done:t"},
		{"{user:7}:1", "{user:7}:1\xc1done:t"},
		{"a{}b", ""},
		{"a}b", ""},
	} {
		if got := doneKey(tc.key, "t", true); got != tc.want {
			t.Errorf("doneKey(%q) = %q, want %q", tc.key, got, tc.want)
		}
		if got := doneKey(tc.key, "t", false); got != tc.key+"\xc1done:t" {
			t.Errorf("on one server, doneKey(%q) = %q", tc.key, got)
		}
	}
	c := redistest.StartCluster(t, 3)
	rdb := c.Client(t)
	ctx := context.Background()
	for _, key := range []string{"user:1", "user:2", "user:{7}:1"} {
		a := Keys{TTL: time.Minute, Cluster: true}.New(key)
		if held := take(t, rdb, a); held != nil {
			t.Fatalf("%s: %q", key, held)
		}
		if landed, err := a.Fill(ctx, rdb, []byte("row"), 0)(); err != nil || !landed {
			t.Fatalf("%s: the fill on a cluster: %v, %v", key, landed, err)
		}
	}
}
