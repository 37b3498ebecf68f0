package layout

import (
	"slices"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// fields returns the fields of key's hash in Redis, sorted.
func (e *env) fields(key string) []string {
	return slices.Sorted(slices.Values(e.rdb.HKeys(e.ctx, key).Val()))
}

// hset writes values, encoded with msgpack.Marshal, to key's hash, as
// another client would.
func (e *env) hset(key string, values map[string]any) {
	e.t.Helper()
	for field, v := range values {
		b, err := msgpack.Marshal(v)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := e.rdb.HSet(e.ctx, key, field, b).Err(); err != nil {
			e.t.Fatal(err)
		}
	}
}

// write runs the write script setting item field of key's hash to a
// login expiring at exp, with a TTL of an hour.
func (e *env) write(h *Hash, key, field string, exp time.Time) {
	e.t.Helper()
	b, err := msgpack.Marshal(map[string]any{"Token": field, "ExpiresAt": exp})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := h.Run(e.ctx, e.rdb, h.SetItems(key, []Item{{Field: field, Value: b, Exp: exp.UnixMilli()}}, time.Hour)).Err(); err != nil {
		e.t.Fatalf("write: %v", err)
	}
}

// TestWriteScriptReadsEveryTimestampForm has a write find expired items
// in bytes other clients may have written: each form of the msgpack
// timestamp, the expiry under another map key, and items it cannot read,
// which it keeps (reads still leave them out once expired).
func TestWriteScriptReadsEveryTimestampForm(t *testing.T) {
	e := newEnv(t)
	h := NewHash(e.clock, true, "ExpiresAt", false, nil)
	now := e.clock.Now()
	past := now.Add(-time.Minute)
	type stored struct {
		name  string
		value any // encoded with msgpack.Marshal
		gone  bool
	}
	for _, c := range []stored{
		{"whole seconds (fixext4), expired", map[string]any{"Token": "a", "ExpiresAt": past.Truncate(time.Second)}, true},
		{"nanoseconds (fixext8), expired", map[string]any{"Token": "b", "ExpiresAt": past.Add(time.Nanosecond)}, true},
		{"before 1970 (ext8), read as none", map[string]any{"Token": "c", "ExpiresAt": time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"year 2600 (ext8), alive", map[string]any{"Token": "d", "ExpiresAt": time.Date(2600, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"alive", map[string]any{"Token": "e", "ExpiresAt": now.Add(time.Hour)}, false},
		{"the zero time: no expiry", map[string]any{"Token": "f", "ExpiresAt": time.Time{}}, false},
		{"expiry after nested values", map[string]any{"A": []any{map[string]any{"x": []byte("y")}, 1.5, nil}, "ExpiresAt": past}, true},
		{"another key only", map[string]any{"Until": past}, false},
		{"an array, not a map", []any{"g", past}, false},
		{"not msgpack", "\xc1", false},
	} {
		e.hset("login:1:ios", map[string]any{c.name: c.value})
	}
	// No %next yet: the first write reads every item.
	e.write(h, "login:1:ios", "new", now.Add(2*time.Hour))
	left := e.fields("login:1:ios")
	for _, name := range []string{"whole seconds (fixext4), expired", "nanoseconds (fixext8), expired", "expiry after nested values"} {
		if slices.Contains(left, name) {
			t.Errorf("%q is still in the hash after a write", name)
		}
	}
	if len(left) != 9 { // 7 kept, "new" and %next
		t.Errorf("fields left: %q", left)
	}
	next, err := e.rdb.HGet(e.ctx, "login:1:ios", "%next").Int64()
	if want := now.Add(time.Hour).UnixMilli(); err != nil || next != want {
		t.Errorf("%%next = %d, %v; want the earliest expiry left, %d", next, err, want)
	}
}

// A %next that is not a number (another client's, or garbage) is no
// index: the write reads every item again, deletes the expired ones, and
// records the earliest expiry left.
func TestWriteScriptReindexesAGarbageIndex(t *testing.T) {
	e := newEnv(t)
	h := NewHash(e.clock, true, "ExpiresAt", false, nil)
	now := e.clock.Now()
	e.hset("h", map[string]any{
		"old":  map[string]any{"ExpiresAt": now.Add(-time.Minute)},
		"live": map[string]any{"ExpiresAt": now.Add(time.Hour)},
	})
	if err := e.rdb.HSet(e.ctx, "h", "bad", "\xdf\xff\xff\xff\xff", "%next", "\xc1garbage").Err(); err != nil {
		t.Fatal(err)
	}
	e.write(h, "h", "new", now.Add(2*time.Hour))
	if got, want := e.fields("h"), []string{"%next", "bad", "live", "new"}; !slices.Equal(got, want) {
		t.Errorf("fields %q, want %q", got, want)
	}
	next, err := e.rdb.HGet(e.ctx, "h", "%next").Int64()
	if want := now.Add(time.Hour).UnixMilli(); err != nil || next != want {
		t.Errorf("%%next = %d, %v; want %d", next, err, want)
	}
}
