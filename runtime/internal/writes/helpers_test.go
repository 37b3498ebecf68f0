package writes

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/fakeclock"
	"github.com/hotkeygen/hotkeygen/internal/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/bloom"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// env is a Writer's test bench: a real redis-server, what the Writer
// logged and how many Redis errors it counted.
type env struct {
	srv    *redistest.Server
	rdb    *redis.Client
	w      *Writer
	logs   bytes.Buffer
	counts int
	ctx    context.Context
}

// newEnv returns a Writer of a String per key over a fresh server, with
// a Bloom filter of entity "e" when filtered.
func newEnv(t *testing.T, filtered bool) *env {
	t.Helper()
	srv := redistest.Start(t)
	e := &env{srv: srv, rdb: srv.Client(t), ctx: context.Background()}
	e.w = &Writer{
		Client: e.rdb, Store: layout.NewString(fakeclock.New(time.Now()), true), Log: slog.New(slog.NewTextHandler(&e.logs, nil)),
		Count: func(context.Context, error) bool { e.counts++; return true },
	}
	if filtered {
		e.w.Bloom = bloom.New(e.rdb, "e", 1000, 0.01)
	}
	return e
}

// breakFilter makes every addition to the filter fail: its one shard is
// a list.
func (e *env) breakFilter(t *testing.T) {
	t.Helper()
	m, k := bloom.Size(1000, 0.01)
	shard := "hotkeygen:bloom:{e:" + strconv.FormatUint(m, 10) + "x" + strconv.Itoa(k) + ":0}"
	if err := e.rdb.LPush(e.ctx, shard, "not bits").Err(); err != nil {
		t.Fatal(err)
	}
}
