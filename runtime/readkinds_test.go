package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

// readKind is one kind of read a repository offers, over an entity whose
// rows are named by id: the read of id's name, on a Cache (or a
// Collection) made on srv with opts and a loader (or a batch loader) of
// rows, named "row <id>", absent for ids above 100.
type readKind struct {
	name string
	make func(t *testing.T, srv *redistest.Server, calls *atomic.Int32, opts ...Option) func(ctx context.Context, id int) (string, error)
}

func rowOf(id int) (string, bool) { return "row " + strconv.Itoa(id), id <= 100 }

// readKinds are Get, View, GetMany (with the loader and with a batch
// loader) and a collection's HGet: each option of the read path holds for
// every one of them.
var readKinds = []readKind{
	{"Get", func(t *testing.T, srv *redistest.Server, calls *atomic.Int32, opts ...Option) func(context.Context, int) (string, error) {
		e := newEnvOn(t, srv, append(opts, WithLoader(profileLoader(calls)))...)
		return func(ctx context.Context, id int) (string, error) {
			v, err := e.c.Get(ctx, "p:"+strconv.Itoa(id))
			if err != nil {
				return "", err
			}
			return v.Name, nil
		}
	}},
	{"View", func(t *testing.T, srv *redistest.Server, calls *atomic.Int32, opts ...Option) func(context.Context, int) (string, error) {
		e := newEnvOn(t, srv, append(opts, WithLoader(profileLoader(calls)))...)
		return func(ctx context.Context, id int) (name string, err error) {
			err = e.c.View(ctx, "p:"+strconv.Itoa(id), func(v *profile) error { name = v.Name; return nil })
			return name, err
		}
	}},
	{"GetMany", func(t *testing.T, srv *redistest.Server, calls *atomic.Int32, opts ...Option) func(context.Context, int) (string, error) {
		e := newEnvOn(t, srv, append(opts, WithLoader(profileLoader(calls)))...)
		return getManyOf(e)
	}},
	{"GetMany with a batch loader", func(t *testing.T, srv *redistest.Server, calls *atomic.Int32, opts ...Option) func(context.Context, int) (string, error) {
		one := profileLoader(calls)
		e := newEnvOn(t, srv, append(opts, WithBatchLoader(func(ctx context.Context, ks []string) (map[string]*profile, error) {
			rows := map[string]*profile{}
			for _, k := range ks {
				if v, err := one(ctx, k); err == nil {
					rows[k] = v
				}
			}
			return rows, nil
		}))...)
		return getManyOf(e)
	}},
	{"HGet", func(t *testing.T, srv *redistest.Server, calls *atomic.Int32, opts ...Option) func(context.Context, int) (string, error) {
		later := time.Now().Add(time.Hour)
		e := newColEnv(t, srv.Client(t), srv.Client(t), loginGlue, append(opts, WithCollectionLoader(func(_ context.Context, k loginOwner) (map[string]*login, error) {
			calls.Add(1)
			name, ok := rowOf(int(k.User))
			if !ok {
				return nil, fmt.Errorf("no row %d: %w", k.User, ErrNotFound)
			}
			return map[string]*login{"t": {User: k.User, Platform: k.Platform, Token: name, ExpiresAt: later}}, nil
		}))...)
		return func(ctx context.Context, id int) (string, error) {
			v, err := e.c.HGet(ctx, loginOwner{int64(id), "web"}, "t")
			if err != nil {
				return "", err
			}
			return v.Token, nil
		}
	}},
}

// profileLoader loads "p:<id>" rows, counting its calls in calls.
func profileLoader(calls *atomic.Int32) func(context.Context, string) (*profile, error) {
	return func(_ context.Context, key string) (*profile, error) {
		calls.Add(1)
		id, _ := strconv.Atoi(key[len("p:"):])
		name, ok := rowOf(id)
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

// degrade=loader, with Redis killed: a cold read of every kind comes
// from the loader, an absent row is ErrNotFound, and degrade=off fails
// with Redis's error, the loader untouched. (Issue 49: GetMany answered
// Redis unavailable, 0 of 3 ids from the loader.)
func TestEveryReadKindDegradesToTheLoaderWhenRedisFails(t *testing.T) {
	for _, kind := range readKinds {
		t.Run(kind.name, func(t *testing.T) {
			for _, degrade := range []string{DegradeLoader, DegradeOff} {
				srv := redistest.Start(t)
				var calls atomic.Int32
				read := kind.make(t, srv, &calls, WithDegrade(degrade))
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
				if n := calls.Load(); degrade == DegradeOff && n != 0 {
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
				var calls atomic.Int32
				read := kind.make(t, srv, &calls, tc.opts...)
				for range 3 {
					if name, err := read(context.Background(), 101); !errors.Is(err, ErrNotFound) {
						t.Fatalf("an absent row read as %q, %v; want ErrNotFound", name, err)
					}
				}
				if n := int(calls.Load()); n != tc.calls {
					t.Errorf("3 reads of an absent row (options %d) called the loader %d times, want %d", len(tc.opts), n, tc.calls)
				}
			}
		})
	}
}
