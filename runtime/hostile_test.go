package runtime

import (
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/wire/wiretest"
)

// readBudget is what a read refusing a value of n bytes may allocate:
// go-redis's copies of the reply, the error, and what decoding did before
// the fault, all bounded by n; never anything sized by a length the value
// declares (the 13-byte value once cost 80 MB a read).
func readBudget(n int) uint64 { return uint64(4*n) + 64<<10 }

// Every read path of a Cache decodes through its codec, so each refuses
// every hostile value in Redis with ErrDecode, without a panic and
// without allocating from a length the value declares: Get, GetMany, and
// the refresh of a hot key, which keeps its last good copy for an outage. The
// profile entity is decoded by reflection, as codec=reflect is; the
// generated codec meets the same values in internal/golden/testdata/codec and
// examples/userstore.
func TestHostileValuesOnEveryReadPath(t *testing.T) {
	e := newEnv(t, WithRefreshFailures(1<<20), WithDemoteEvery(24*time.Hour))
	good := sample(1, "ada")
	e.put("p:hot", good)
	e.heat("p:hot")
	for i, h := range wiretest.Hostile() {
		t.Run(h.Name, func(t *testing.T) {
			key := "p:" + strconv.Itoa(i)
			e.put("p:hot", good) // the last subtest left a hostile value there
			if err := e.raw.Set(e.ctx, key, h.Bytes, 0).Err(); err != nil {
				t.Fatal(err)
			}
			var err error
			_, _ = e.c.GetMany(e.ctx, []string{key}) // the first calls of a path allocate once for good
			if n := wiretest.Allocated(3, func() { _, err = e.c.Get(e.ctx, key) }); n > readBudget(len(h.Bytes)) {
				t.Errorf("Get of %d bytes allocated %d bytes", len(h.Bytes), n)
			}
			if !errors.Is(err, ErrDecode) {
				t.Errorf("Get = %v, want ErrDecode", err)
			}
			if n := wiretest.Allocated(3, func() { _, err = e.c.GetMany(e.ctx, []string{"p:hot", key}) }); n > readBudget(len(h.Bytes)) {
				t.Errorf("GetMany of %d bytes allocated %d bytes", len(h.Bytes), n)
			}
			if !errors.Is(err, ErrDecode) {
				t.Errorf("GetMany = %v, want ErrDecode", err)
			}

			if err := e.raw.Set(e.ctx, "p:hot", h.Bytes, 0).Err(); err != nil {
				t.Fatal(err)
			}
			before := e.c.Stats()
			if n := wiretest.Allocated(1, func() { e.tick(DefaultRefresh) }); n > readBudget(len(h.Bytes)) {
				t.Errorf("a refresh of %d bytes allocated %d bytes", len(h.Bytes), n)
			}
			after := e.c.Stats()
			if after.RefreshErrors != before.RefreshErrors+1 || after.DecodeErrors != before.DecodeErrors+1 {
				t.Errorf("refresh: %d refresh errors, %d decode errors; want one more of each than %d, %d",
					after.RefreshErrors, after.DecodeErrors, before.RefreshErrors, before.DecodeErrors)
			}
			// The copy is kept for an outage, but not served while Redis
			// answers: what Redis holds is the answer.
			if _, err := e.c.Get(e.ctx, "p:hot"); !errors.Is(err, ErrDecode) {
				t.Errorf("after a failed refresh the hot key reads %v, want ErrDecode", err)
			}
			if !holds(e.c, "p:hot") {
				t.Error("the failed refresh dropped the hot key")
			}
		})
	}
}

// The codec's decode, which every path calls, refuses the values itself.
func TestCodecDecodeRefusesHostileValues(t *testing.T) {
	c := newCodec[profile](nil, nil)
	for _, h := range wiretest.Hostile() {
		var err error
		if n := wiretest.Allocated(3, func() { _, err = c.decode(h.Bytes) }); n > uint64(2*len(h.Bytes))+16<<10 {
			t.Errorf("%s: decode allocated %d bytes", h.Name, n)
		}
		if err == nil {
			t.Errorf("%s: decoded", h.Name)
		}
	}
}

// After one huge value, the encoder's buffer comes back down to the size
// of the values written: one 4 MiB Set once made every later 12-byte Set
// allocate 4.2 MB.
func TestEncodeBufferFollowsValueSizes(t *testing.T) {
	type blob struct{ B []byte }
	c := newCodec(func(v *blob, b []byte) ([]byte, error) { return append(b, v.B...), nil }, nil)
	big, small := &blob{make([]byte, 4<<20)}, &blob{make([]byte, 12)}
	encode := func(v *blob) uint64 {
		return wiretest.Allocated(1, func() {
			if b, err := c.encode(v); err != nil || len(b) != len(v.B) {
				t.Fatalf("encode: %d bytes, %v", len(b), err)
			}
		})
	}
	encode(big)
	var total uint64
	for i := range 30 {
		n := encode(small)
		total += n
		if i >= 10 && n > 256 {
			t.Fatalf("the %dth 12-byte value after a 4 MiB one allocated %d bytes", i+1, n)
		}
	}
	if total > 2*uint64(len(big.B)) {
		t.Fatalf("30 small values after a big one allocated %d bytes in all, more than twice the big one", total)
	}
	// Sizes within a quarter of the last one fit the buffer at once.
	sizes := []int{1000, 1200, 1000, 1240, 1100, 1300}
	encode(&blob{make([]byte, sizes[0])})
	for i, n := range sizes[1:] {
		if got := encode(&blob{make([]byte, n)}); got > uint64(2*n) {
			t.Errorf("%d bytes after %d: allocated %d, the buffer grew", n, sizes[i], got)
		}
	}
}

// A key of a megabyte, a caller's input gone wrong, is read and written as
// any other, and every error and log line that names it quotes its first
// operr.Shown bytes and its length: before, the big-value warning was one
// line of 1,048,709 characters.
func TestAHugeKeyIsQuotedShort(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithMaxValueBytes(16))
	key := "p:" + strings.Repeat("9", 1<<20)
	if err := e.c.Set(e.ctx, key, sample(1, "a name longer than sixteen bytes")); err != nil {
		t.Fatal(err)
	}
	if v, err := e.c.Get(e.ctx, key); err != nil || v.Name != "a name longer than sixteen bytes" {
		t.Fatalf("Get of a huge key = %+v, %v", v, err)
	}
	lines := logs.linesWith("big value")
	if len(lines) == 0 {
		t.Fatal("the big value was not warned about")
	}
	for _, l := range lines {
		if len(l) > 1024 || !strings.Contains(l, "(1048578 bytes)") {
			t.Fatalf("a line of %d bytes names the key: %.300s…", len(l), l)
		}
	}
	_, err := e.c.Get(e.ctx, key+"x")
	if msg := err.Error(); len(msg) > 1024 || !strings.Contains(msg, "(1048579 bytes)") || !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an absent huge key: an error of %d bytes: %.300s…", len(msg), msg)
	}
}
