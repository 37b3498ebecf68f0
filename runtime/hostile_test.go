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
			if !holds(e.c.e, "p:hot") {
				t.Error("the failed refresh dropped the hot key")
			}
		})
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
