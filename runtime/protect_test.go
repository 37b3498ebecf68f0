package runtime

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

func TestDegradeToLoaderWhenRedisFails(t *testing.T) {
	srv := redistest.Start(t)
	tb := newTable(sample(1, "ada"))
	e := newEnvOn(t, srv, WithLoader(tb.load), WithDegrade(DegradeLoader), WithDegradeLimit(1))
	srv.Kill()
	if got := e.get("p:1"); got.Name != "ada" {
		t.Fatalf("with Redis down and degrade=loader Get = %q", got.Name)
	}
	if st := e.c.Stats(); st.DegradedLoads != 1 {
		t.Fatalf("DegradedLoads = %d, want 1", st.DegradedLoads)
	}

	// At the limit, a read fails at once with Redis's error.
	tb.gate = make(chan struct{})
	go e.c.Get(e.ctx, "p:1")
	waitFor(t, "the first degraded load to start", func() bool { return tb.calls.Load() == 2 })
	if _, err := e.c.Get(e.ctx, "p:1"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("a read beyond the degrade limit = %v, want Redis's error", err)
	}
	close(tb.gate)
	waitFor(t, "the degraded load to end", func() bool { return e.c.e.DegradedLoads() == 0 })
}

func TestDegradeNeedsALoader(t *testing.T) {
	srv := redistest.Start(t)
	var ce *ConfigError
	if _, err := New(srv.Client(t), profileGlue, WithDegrade(DegradeLoader)); !errors.As(err, &ce) || ce.Option != "degrade" {
		t.Fatalf("New = %v, want a ConfigError for degrade", err)
	}
}

// A value above max_value_bytes_hard is never stored, whichever write
// would store it (every kind the write path takes): the repository's Set
// and a collection's HSet fail with ErrValueTooLarge, a loader's or a
// batch loader's row is returned to its caller without being written
// back, and the change buffer's sync deletes the key instead, so that
// Redis keeps neither the big row nor the stale one.
func TestAValueAboveTheHardLimitIsStoredByNoWrite(t *testing.T) {
	huge := func() *profile { return sample(1, strings.Repeat("x", 2000)) }
	hard := WithMaxValueBytesHard(1000)
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, srv *redistest.Server) error // of p:1, or login:1:web's item
		key   string
		want  error // what the caller is told
	}{
		{"Set", func(t *testing.T, srv *redistest.Server) error {
			e := newEnvOn(t, srv, hard)
			return e.c.Set(e.ctx, "p:1", huge())
		}, "p:1", ErrValueTooLarge},
		{"HSet", func(t *testing.T, srv *redistest.Server) error {
			e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue, hard)
			return e.c.HSet(e.ctx, &login{User: 1, Platform: "web", Token: strings.Repeat("x", 2000)})
		}, "login:1:web", ErrValueTooLarge},
		{"a loader's write-back", func(t *testing.T, srv *redistest.Server) error {
			e := newEnvOn(t, srv, hard, WithLoader(func(context.Context, string) (*profile, error) { return huge(), nil }))
			_, err := e.c.Get(e.ctx, "p:1")
			return err
		}, "p:1", nil},
		{"a batch loader's write-back", func(t *testing.T, srv *redistest.Server) error {
			e := newEnvOn(t, srv, hard, WithBatchLoader(func(_ context.Context, ks []string) (map[string]*profile, error) {
				rows := map[string]*profile{}
				for _, k := range ks {
					rows[k] = huge()
				}
				return rows, nil
			}))
			_, err := e.c.GetMany(e.ctx, []string{"p:1"})
			return err
		}, "p:1", nil},
		{"the change buffer's sync", func(t *testing.T, srv *redistest.Server) error {
			e := newEnvOn(t, srv, hard, WithChanges(true), WithSyncEvery(time.Hour), WithSyncLease(2*time.Hour),
				WithLoader(func(context.Context, string) (*profile, error) { return huge(), nil }))
			e.put("p:1", sample(1, "the row before the change"))
			if err := e.c.MarkChanged(e.ctx, "p:1"); err != nil {
				return err
			}
			_, err := e.c.e.SyncOnce(e.ctx)
			return err
		}, "p:1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			if err := tc.write(t, srv); !errors.Is(err, tc.want) {
				t.Fatalf("%s of a 2 KB value: %v, want %v", tc.name, err, tc.want)
			}
			if n := srv.Client(t).Exists(context.Background(), tc.key).Val(); n != 0 {
				t.Fatalf("%s left %s in Redis: a value above max_value_bytes_hard, or the row it replaced", tc.name, tc.key)
			}
		})
	}
}

func TestBigValuesWarnOncePerMinuteAndHardLimitRejects(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithMaxValueBytes(100), WithMaxValueBytesHard(1000))
	big := sample(1, strings.Repeat("x", 200))
	for range 3 {
		if err := e.c.Set(e.ctx, "p:1", big); err != nil {
			t.Fatal(err)
		}
		e.get("p:1")
	}
	if n := strings.Count(logs.String(), "hotkey: big value"); n != 1 {
		t.Fatalf("%d warnings for one key within a minute, want 1:\n%s", n, logs.String())
	}
	e.clock.Advance(time.Minute)
	e.get("p:1")
	if n := strings.Count(logs.String(), "hotkey: big value"); n != 2 {
		t.Fatalf("%d warnings after a minute, want 2", n)
	}
	if st := e.c.Stats(); st.BigValues != 7 {
		t.Fatalf("BigValues = %d, want 7 (3 writes, 4 reads)", st.BigValues)
	}

	err := e.c.Set(e.ctx, "p:2", sample(2, strings.Repeat("x", 2000)))
	if !errors.Is(err, ErrValueTooLarge) || !strings.Contains(err.Error(), "max_value_bytes_hard 1000") {
		t.Fatalf("Set of a 2 KB value = %v, want ErrValueTooLarge", err)
	}
	if e.raw.Exists(context.Background(), "p:2").Val() != 0 {
		t.Fatal("the rejected value was written")
	}
}
