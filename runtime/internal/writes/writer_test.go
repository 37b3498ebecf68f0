package writes

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Set writes the bytes, and adds the key to the filter when there is
// one; a failed addition fails the write, which landed nonetheless.
func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name             string
		filtered, broken bool
		err              string // part of Set's error; "" for none
	}{
		{"without a filter", false, false, ""},
		{"with a filter", true, false, ""},
		{"with a filter that fails", true, true, "add to the Bloom filter: WRONGTYPE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.filtered)
			if tc.broken {
				e.breakFilter(t)
			}
			err := e.w.Set(e.ctx, "k:1", []byte("v1"), time.Minute)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Set = %v, want an error with %q", err, tc.err)
			}
			if got := e.rdb.Get(e.ctx, "k:1").Val(); got != "v1" {
				t.Fatalf("k:1 holds %q", got)
			}
			if e.w.Bloom != nil && e.w.Bloom.Stats().Adds != 1 {
				t.Fatalf("%d additions to the filter, want 1", e.w.Bloom.Stats().Adds)
			}
		})
	}
}

// A write-back never overwrites what a writer stored; a row's write-back
// adds its key to the filter, and a failed addition is logged, not
// returned.
func TestWriteBack(t *testing.T) {
	for _, tc := range []struct {
		name             string
		row              bool // WriteBackRow, not WriteBack
		filtered, broken bool
		log              string // part of a line logged; "" for none
	}{
		{"a placeholder", false, true, false, ""},
		{"a row without a filter", true, false, false, ""},
		{"a row with a filter", true, true, false, ""},
		{"a row with a filter that fails", true, true, true, "adding a loaded id to the Bloom filter failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.filtered)
			if tc.broken {
				e.breakFilter(t)
			}
			write := e.w.WriteBack
			if tc.row {
				write = e.w.WriteBackRow
			}
			e.rdb.Set(e.ctx, "k:1", "newer", 0)
			if ok, _ := write(e.ctx, "k:1", []byte("loaded"), time.Minute); ok || e.rdb.Get(e.ctx, "k:1").Val() != "newer" {
				t.Fatalf("a write-back over a stored value wrote (%v): k:1 holds %q", ok, e.rdb.Get(e.ctx, "k:1").Val())
			}
			ok, exp := write(e.ctx, "k:2", []byte("loaded"), time.Minute)
			if !ok || exp <= 0 || e.rdb.Get(e.ctx, "k:2").Val() != "loaded" {
				t.Fatalf("the write-back of an absent key = %v, expiry %d; k:2 holds %q", ok, exp, e.rdb.Get(e.ctx, "k:2").Val())
			}
			if added := e.w.Bloom != nil && e.w.Bloom.Stats().Adds > 0; added != (tc.row && tc.filtered) {
				t.Fatalf("added to the filter: %v", added)
			}
			if logged := e.logs.String(); !strings.Contains(logged, tc.log) || tc.log == "" && logged != "" {
				t.Fatalf("logged %q, want %q", logged, tc.log)
			}
		})
	}
}

// A failed write-back is counted and logged, and reports nothing
// written.
func TestAFailedWriteBackIsCountedAndLogged(t *testing.T) {
	e := newEnv(t, false)
	e.srv.Kill()
	if ok, _ := e.w.WriteBack(e.ctx, "k:1", []byte("loaded"), time.Minute); ok {
		t.Fatal("a write-back to a killed server wrote")
	}
	if e.counts != 1 || !strings.Contains(e.logs.String(), "write-back failed") {
		t.Fatalf("counted %d, logged %q", e.counts, e.logs.String())
	}
}

// Drop deletes bytes that do not decode, and says so; a failed delete
// is counted.
func TestDrop(t *testing.T) {
	e := newEnv(t, false)
	e.rdb.Set(e.ctx, "k:1", "junk", 0)
	e.w.Drop(e.ctx, "k:1", errJunk)
	if e.rdb.Exists(e.ctx, "k:1").Val() != 0 || !strings.Contains(e.logs.String(), "deleting a value that does not decode") {
		t.Fatalf("k:1 exists %d after Drop; logged %q", e.rdb.Exists(e.ctx, "k:1").Val(), e.logs.String())
	}
	e.srv.Kill()
	e.w.Drop(e.ctx, "k:1", errJunk)
	if e.counts != 1 {
		t.Fatalf("a failed delete counted %d times", e.counts)
	}
}

var errJunk = errors.New("value does not decode")
