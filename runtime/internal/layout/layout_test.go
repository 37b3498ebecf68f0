package layout

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
	"github.com/hotkeygen/hotkeygen/runtime/wire/wiretest"
)

// env is a layout's test bench: a real redis-server, and a manual clock
// that starts at the wall clock's now, since hash TTLs are absolute
// times in Redis.
type env struct {
	t     *testing.T
	rdb   *redis.Client
	clock *fakeclock.Clock
	ctx   context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := redistest.Start(t)
	return &env{t: t, rdb: srv.Client(t), clock: fakeclock.New(time.Now().Truncate(time.Millisecond)), ctx: context.Background()}
}

// read reads key with l, failing the test on an error other than
// redis.Nil.
func (e *env) read(l Layout, key string) ([]byte, int64) {
	e.t.Helper()
	b, exp, err := l.Read(e.ctx, send.Pool{Client: e.rdb}, key, true)
	if err != nil && !errors.Is(err, redis.Nil) {
		e.t.Fatalf("Read(%q): %v", key, err)
	}
	return b, exp
}

// queue reads keys with one Queue on a pipeline and returns their bytes
// and expiries.
func (e *env) queue(l Layout, keys ...string) ([][]byte, []int64) {
	e.t.Helper()
	pipe := e.rdb.Pipeline()
	r := l.Queue(e.ctx, pipe, keys, nil)
	sent := e.clock.Now()
	_, _ = pipe.Exec(e.ctx)
	vals, err := r.Values()
	if err != nil {
		e.t.Fatalf("Values: %v", err)
	}
	exps := make([]int64, len(keys))
	for j := range keys {
		if exps[j], err = r.Expiry(j, sent); err != nil {
			e.t.Fatalf("Expiry(%d): %v", j, err)
		}
	}
	return vals, exps
}

// within reports whether exp, the expiry of a copy of a key written with
// ttl at the clock's now, is at most ttl ahead and less than a second
// short of it: Redis counts down in real time.
func (e *env) within(exp int64, ttl time.Duration) bool {
	at := e.clock.Now().UnixNano()
	return exp <= at+int64(ttl) && exp > at+int64(ttl-time.Second)
}

// serverForm is the form a Hash whose items expire takes on the test's
// server, as the server itself says it expires hash fields or not.
func (e *env) serverForm() int32 {
	e.t.Helper()
	native, err := FieldExpiry(e.ctx, e.rdb)
	if err != nil {
		e.t.Fatal(err)
	}
	if native {
		return formNative
	}
	return formScript
}

// pttls returns the PTTLs the server has run since the last call.
func (e *env) pttls() int {
	e.t.Helper()
	n := redistest.CommandStat(e.t, e.rdb, "pttl", "calls")
	if err := e.rdb.ConfigResetStat(e.ctx).Err(); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// A read whose caller keeps no copy (the cold read of a key that is not
// hot) asks no TTL, even of an entity whose keys carry one: its expiry
// is Unasked, which no copy is kept with. Only the keys of a batch whose
// copies are kept have their PTTL asked.
func TestOnlyAReadThatKeepsACopyAsksTheTTL(t *testing.T) {
	e := newEnv(t)
	for _, l := range []Layout{NewString(e.clock, true), NewHash(e.clock, true, "", false, nil)} {
		t.Run(l.ReadOp(), func(t *testing.T) {
			keys := []string{l.ReadOp() + ":a", l.ReadOp() + ":b", l.ReadOp() + ":c"}
			for _, k := range keys {
				v := AppendItem(nil, "i", 0, []byte("v")) // a String's bytes, a collection of one item
				if ok, err := must(l.SetNX(e.ctx, e.rdb, k, v, time.Minute))(); !ok || err != nil {
					t.Fatalf("SetNX(%s): %v, %v", k, ok, err)
				}
			}
			e.pttls()
			for _, c := range []struct {
				keep   bool
				pttls  int
				unsure bool
			}{{keep: false, pttls: 0, unsure: true}, {keep: true, pttls: 1}} {
				b, exp, err := l.Read(e.ctx, send.Pool{Client: e.rdb}, keys[0], c.keep)
				if err != nil || len(b) == 0 {
					t.Fatalf("Read(keep=%v) = %q, %v", c.keep, b, err)
				}
				if n := e.pttls(); n != c.pttls || (exp == Unasked) != c.unsure || !c.unsure && !e.within(exp, time.Minute) {
					t.Errorf("Read(keep=%v): %d PTTLs, expiry %d; want %d PTTLs, Unasked %v", c.keep, n, exp, c.pttls, c.unsure)
				}
			}
			pipe := e.rdb.Pipeline()
			r := l.Queue(e.ctx, pipe, keys, []bool{false, true, false})
			sent := e.clock.Now()
			_, _ = pipe.Exec(e.ctx)
			if n := e.pttls(); n != 1 {
				t.Errorf("a batch keeping one copy of three asked %d PTTLs", n)
			}
			for j, unsure := range []bool{true, false, true} {
				if exp, err := r.Expiry(j, sent); err != nil || (exp == Unasked) != unsure || !unsure && !e.within(exp, time.Minute) {
					t.Errorf("Expiry(%d) = %d, %v; want Unasked %v", j, exp, err, unsure)
				}
			}
		})
	}
}

func TestStringLayout(t *testing.T) {
	for _, learn := range []bool{false, true} {
		t.Run("learnTTL="+strconv.FormatBool(learn), func(t *testing.T) {
			e := newEnv(t)
			l := NewString(e.clock, learn)
			if b, _, err := l.Read(e.ctx, send.Pool{Client: e.rdb}, "k", true); !errors.Is(err, redis.Nil) {
				t.Fatalf("an absent key reads %q, %v; want redis.Nil", b, err)
			}
			done, exp := l.SetNX(e.ctx, e.rdb, "k", []byte("v1"), 10*time.Second)
			if ok, err := done(); !ok || err != nil {
				t.Fatalf("SetNX of an absent key: %v, %v", ok, err)
			}
			if want := WroteExpiry(e.clock.Now(), 10*time.Second); exp != want {
				t.Errorf("SetNX's expiry %d, want %d", exp, want)
			}
			if done, _ := l.SetNX(e.ctx, e.rdb, "k", []byte("v2"), 0); done.Landed() {
				t.Error("SetNX wrote over a key")
			}
			b, exp := e.read(l, "k")
			if string(b) != "v1" || learn != (exp != 0) || learn && !e.within(exp, 10*time.Second) {
				t.Errorf("Read = %q, expiry %d (now %d)", b, exp, e.clock.Now().UnixNano())
			}
			if err := l.Set(e.ctx, e.rdb, "k2", []byte("w"), 0).Err(); err != nil {
				t.Fatal(err)
			}
			vals, exps := e.queue(l, "k", "missing", "k2")
			if want := [][]byte{[]byte("v1"), nil, []byte("w")}; !slices.EqualFunc(vals, want, slices.Equal) {
				t.Errorf("Queue's values %q, want %q", vals, want)
			}
			switch {
			case !learn && slices.ContainsFunc(exps, func(x int64) bool { return x != 0 }):
				t.Errorf("expiries %d without learning TTLs", exps)
			case learn && (!e.within(exps[0], 10*time.Second) || exps[1] != e.clock.Now().UnixNano() || exps[2] != 0):
				t.Errorf("expiries %d: want k's TTL, the read's time for a missing key, none for k2", exps)
			}
			if err := l.Del(e.ctx, e.rdb, "k").Err(); err != nil {
				t.Fatal(err)
			}
			if b, _, err := l.Read(e.ctx, send.Pool{Client: e.rdb}, "k", true); !errors.Is(err, redis.Nil) {
				t.Fatalf("a deleted key reads %q, %v", b, err)
			}
		})
	}
}

// A write-back queued on a pipeline reports its outcome once the
// pipeline has run.
func TestSetNXOnAPipeline(t *testing.T) {
	e := newEnv(t)
	for _, l := range []Layout{NewString(e.clock, false), NewHash(e.clock, false, "", false, nil)} {
		key := l.ReadOp() + ":k"
		pipe := e.rdb.Pipeline()
		first, _ := l.SetNX(e.ctx, pipe, key, AppendItem(nil, "f", 0, []byte("1")), time.Minute)
		second, _ := l.SetNX(e.ctx, pipe, key, AppendItem(nil, "f", 0, []byte("2")), time.Minute)
		if _, err := pipe.Exec(e.ctx); err != nil {
			t.Fatal(err)
		}
		if !first.Landed() || second.Landed() {
			t.Errorf("%s: the first write-back landed %v, the second %v", l.ReadOp(), first.Landed(), second.Landed())
		}
	}
}

func TestHashLayout(t *testing.T) {
	e := newEnv(t)
	h := NewHash(e.clock, true, "", false, nil)
	if b, _, err := h.Read(e.ctx, send.Pool{Client: e.rdb}, "h", true); !errors.Is(err, redis.Nil) {
		t.Fatalf("an absent hash reads %q, %v; want redis.Nil", b, err)
	}
	later := e.clock.Now().Add(time.Hour).UnixMilli()
	b := AppendItem(AppendItem(nil, "b", 0, []byte("2")), "a", later, []byte("1"))
	done, exp := h.SetNX(e.ctx, e.rdb, "h", b, time.Minute)
	if !done.Landed() {
		t.Fatal("the write-back of an absent hash did not land")
	}
	if exp != later*int64(time.Millisecond) {
		t.Errorf("SetNX's expiry %d, want the latest item's, %d", exp, later*int64(time.Millisecond))
	}
	if at := e.rdb.PExpireTime(e.ctx, "h").Val(); at != time.Duration(later)*time.Millisecond {
		t.Errorf("PEXPIRETIME %v, want %v", at, time.Duration(later)*time.Millisecond)
	}
	if done, _ := h.SetNX(e.ctx, e.rdb, "h", AppendItem(nil, "c", 0, nil), 0); done.Landed() {
		t.Error("SetNX wrote over a hash")
	}
	got, exp := e.read(h, "h")
	want := AppendItem(AppendItem(nil, "a", 0, []byte("1")), "b", 0, []byte("2"))
	if !slices.Equal(got, want) || !e.within(exp, time.Hour) {
		t.Errorf("Read = %q, expiry %d; want %q, sorted, expiries unknown", got, exp, want)
	}

	if !must(h.SetNX(e.ctx, e.rdb, "absent", Null, time.Minute)).Landed() {
		t.Fatal("the placeholder of an absent owner did not land")
	}
	if fs := e.rdb.HKeys(e.ctx, "absent").Val(); !slices.Equal(fs, []string{nullField}) {
		t.Errorf("the placeholder's hash holds %q", fs)
	}
	if got, _ := e.read(h, "absent"); !slices.Equal(got, Null) {
		t.Errorf("the placeholder reads %q, want Null", got)
	}

	if done, _ := h.SetNX(e.ctx, e.rdb, "bad", []byte{0x05, 'x'}, time.Minute); done.Landed() || e.rdb.Exists(e.ctx, "bad").Val() != 0 {
		t.Error("bytes not in the runtime's form were written")
	}
	if err := h.Set(e.ctx, e.rdb, "h", want, 0).Err(); !errors.Is(err, errWholeSet) {
		t.Errorf("Set of a whole collection: %v, want %v", err, errWholeSet)
	}

	vals, _ := e.queue(h, "h")
	missing, _ := e.queue(h, "missing")
	if !slices.Equal(vals[0], want) || len(missing) != 1 || missing[0] != nil {
		t.Errorf("Queue reads %q and %q for a missing hash", vals, missing)
	}
	if v, err := h.ReadItem(e.ctx, e.rdb, "h", "b"); string(v) != "2" || err != nil {
		t.Errorf("ReadItem = %q, %v", v, err)
	}
	if err := h.Del(e.ctx, e.rdb, "h").Err(); err != nil || e.rdb.Exists(e.ctx, "h").Val() != 0 {
		t.Errorf("Del: %v", err)
	}
}

func must(done Written, _ int64) Written { return done }

// Run and RunMany send the script's body only to a server that does not
// hold it: after SCRIPT FLUSH, both still write.
func TestRunAfterTheScriptIsFlushed(t *testing.T) {
	e := newEnv(t)
	h := NewHash(e.clock, false, "", false, nil)
	for round := range 2 {
		if err := e.rdb.ScriptFlush(e.ctx).Err(); err != nil {
			t.Fatal(err)
		}
		v := []byte(strconv.Itoa(round))
		if err := h.Run(e.ctx, e.rdb, h.SetItems("one", []Item{{Field: "f", Value: v}}, time.Minute)).Err(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if err := e.rdb.ScriptFlush(e.ctx).Err(); err != nil {
			t.Fatal(err)
		}
		ws := []Write{h.SetItems("a", []Item{{Field: "f", Value: v}}, time.Minute), h.SetItems("b", []Item{{Field: "g", Value: v}}, 0)}
		for i, cmd := range h.RunMany(e.ctx, e.rdb, ws, nil) {
			if err := cmd.Err(); err != nil {
				t.Fatalf("RunMany's write %d: %v", i, err)
			}
		}
		for _, kf := range [][2]string{{"one", "f"}, {"a", "f"}, {"b", "g"}} {
			if got, _ := h.ReadItem(e.ctx, e.rdb, kf[0], kf[1]); !slices.Equal(got, v) {
				t.Errorf("round %d: %s %s = %q", round, kf[0], kf[1], got)
			}
		}
	}
	if err := h.Run(e.ctx, e.rdb, h.DelItems("a", []string{"f"})).Err(); err != nil || e.rdb.Exists(e.ctx, "a").Val() != 0 {
		t.Errorf("DelItems of the last item: %v, and the hash is left", err)
	}
}

// A hash another client filled with hostile item bytes reads as those
// bytes, item by item, without a panic and without allocating from a
// length any of them declares: decoding them is the caller's.
func TestHashReadsHostileItems(t *testing.T) {
	e := newEnv(t)
	h := NewHash(e.clock, true, "", false, nil)
	for i, v := range wiretest.Hostile() {
		key := "hostile:" + strconv.Itoa(i)
		if err := e.rdb.HSet(e.ctx, key, "f", v.Bytes, "%next", v.Bytes).Err(); err != nil {
			t.Fatal(err)
		}
		b, _, err := h.Read(e.ctx, send.Pool{Client: e.rdb}, key, true) // the first calls of a path allocate once for good
		if n := wiretest.Allocated(3, func() { b, _, err = h.Read(e.ctx, send.Pool{Client: e.rdb}, key, true) }); n > uint64(4*len(v.Bytes))+64<<10 {
			t.Errorf("%s: Read of %d bytes allocated %d", v.Name, len(v.Bytes), n)
		}
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if got := readAll(t, b); len(got) != 1 || got[0].field != "f" || got[0].value != string(v.Bytes) {
			t.Errorf("%s: read %+v", v.Name, got)
		}
	}
}
