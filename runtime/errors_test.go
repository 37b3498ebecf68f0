package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// An error says "hotkey: " once, at its start, with the operation and its
// key once, and names the node by its address; wrapping keeps
// errors.Is working. Before, a collection read of a node found down said
// `hotkey: hgetall "login:1:ios": hotkey: hgetall "login:1:ios": hotkey:
// Redis unavailable` and named the node "redis".
func TestErrorsSayHotkeyOnceAndNameTheNode(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnvOn(t, srv)
	col := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue)
	owner := loginOwner{User: 1, Platform: "ios"}
	srv.Kill()

	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error with Redis down")
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "hotkey: ") || strings.Count(msg, "hotkey:") != 1 {
			t.Errorf("%q: want one \"hotkey:\", at the start", msg)
		}
		if !strings.Contains(msg, srv.Addr) {
			t.Errorf("%q: does not name the node, %s", msg, srv.Addr)
		}
	}
	// The call that finds Redis down fails with what the client said, or
	// ErrUnavailable when the breaker opened while it waited, and leaves
	// the breaker open.
	_, err := e.c.Get(e.ctx, "p:0")
	check(t, err)
	if e.c.Stats().RedisDownSince.IsZero() {
		t.Fatal("the breaker is closed after a call found Redis down")
	}
	_, err = col.c.HGetAll(col.ctx, loginOwner{User: 0, Platform: "ios"})
	check(t, err)
	if col.c.Stats().RedisDownSince.IsZero() {
		t.Fatal("the collection's breaker is closed after a call found Redis down")
	}

	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, err := e.c.Get(ctx, "p:1"); return err }},
		{"GetMany", func(ctx context.Context) error { _, err := e.c.GetMany(ctx, []string{"p:1", "p:2"}); return err }},
		{"Set", func(ctx context.Context) error { return e.c.Set(ctx, "p:1", sample(1, "v")) }},
		{"Del", func(ctx context.Context) error { return e.c.Del(ctx, "p:1") }},
		{"HGetAll", func(ctx context.Context) error { _, err := col.c.HGetAll(ctx, owner); return err }},
		{"HGetAllMany", func(ctx context.Context) error {
			_, err := col.c.HGetAllMany(ctx, []loginOwner{owner})
			return err
		}},
		{"HGet", func(ctx context.Context) error { _, err := col.c.HGet(ctx, owner, "t1"); return err }},
		{"HSet", func(ctx context.Context) error {
			return col.c.HSet(ctx, &login{User: 1, Platform: "ios", Token: "t1", ExpiresAt: time.Now().Add(time.Hour)})
		}},
		{"HDel", func(ctx context.Context) error { return col.c.HDel(ctx, owner, "t1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(context.Background())
			check(t, err)
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("%q: not an ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), "(last error: ") || !strings.Contains(err.Error(), "connection refused") {
				t.Errorf("%q: does not say what Redis last answered", err)
			}
		})
	}
}
