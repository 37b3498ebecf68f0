package send

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// senders are the two ways a read travels, over one client of srv that
// never times a read out, so a frozen server holds a read as long as the
// test wants; sends counts what the client sends, a command or a
// pipeline, as its hooks see them.
func senders(t *testing.T, srv *redistest.Server) (rdb *redis.Client, sends *atomic.Int64, all map[string]Sender) {
	t.Helper()
	rdb = redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	sends = new(atomic.Int64)
	rdb.AddHook(sendCounter{sends})
	auto, err := For(rdb, true)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := For(rdb, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := auto.(Auto); !ok {
		t.Fatalf("For(a server's client, auto) = %T, want Auto", auto)
	}
	return rdb, sends, map[string]Sender{"pool": pool, "auto": auto}
}

// waiting counts the goroutines waiting in Auto.Send for a reply.
func waiting() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("AutoFuture).WaitContext")) || bytes.Contains(g, []byte("AutoFuture.WaitContext")) {
			if bytes.Contains(g, []byte("send.Auto.Send")) {
				n++
			}
		}
	}
	return n
}

// sendCounter counts the sends of reads its client's hooks see: a
// command or a pipeline that holds a GET, not a new connection's
// greeting. The automatic pipeline passes a batch of one command through
// the command's hook, a longer one through the pipeline's.
type sendCounter struct{ n *atomic.Int64 }

func (sendCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h sendCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h sendCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.count(cmds)
		return next(ctx, cmds)
	}
}

func (h sendCounter) count(cmds []redis.Cmder) {
	if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "get" }) {
		h.n.Add(1)
	}
}

// Either sender returns each command's reply: a value, a key's TTL in the
// same read, one send for the two, and redis.Nil for a key Redis does
// not hold.
func TestEachSenderReturnsEachReply(t *testing.T) {
	srv := redistest.Start(t)
	rdb, sends, all := senders(t, srv)
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	for name, s := range all {
		t.Run(name, func(t *testing.T) {
			get, left := redis.NewStringCmd(ctx, "get", "k"), redis.NewDurationCmd(ctx, time.Millisecond, "pttl", "k")
			before := sends.Load()
			if err := s.Send(ctx, get, left); err != nil {
				t.Fatal(err)
			}
			if n := sends.Load() - before; n != 1 {
				t.Errorf("a read of two commands took %d sends, want 1", n)
			}
			if v, err := get.Result(); v != "v" || err != nil {
				t.Errorf("GET k = %q, %v", v, err)
			}
			if d, err := left.Result(); d <= 59*time.Minute || err != nil {
				t.Errorf("PTTL k = %v, %v; want about an hour", d, err)
			}
			missing := redis.NewStringCmd(ctx, "get", "missing")
			if err := s.Send(ctx, missing); err != nil || !errors.Is(missing.Err(), redis.Nil) {
				t.Errorf("GET missing: Send %v, reply %v; want redis.Nil", err, missing.Err())
			}
		})
	}
}

// A read on a server that answers nothing returns when its context ends,
// with the context's error; the reply that comes later is dropped, and
// the next read gets its own.
func TestAReadGivenUpReturnsAtOnceAndItsReplyIsDropped(t *testing.T) {
	srv := redistest.Start(t)
	rdb, _, all := senders(t, srv)
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		if err := rdb.Set(ctx, k, "value of "+k, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range all {
		t.Run(name, func(t *testing.T) {
			srv.Hang(t)
			rctx, cancel := context.WithCancel(ctx)
			get := redis.NewStringCmd(rctx, "get", "a")
			done := make(chan error, 1)
			go func() {
				err := s.Send(rctx, get)
				if err == nil {
					err = get.Err() // the pool's: the command's own error
				}
				done <- err
			}()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("a read given up returned %v, want context.Canceled", err)
			}
			if err := srv.Thaw(); err != nil {
				t.Fatal(err)
			}
			next := redis.NewStringCmd(ctx, "get", "b")
			if err := s.Send(ctx, next); err != nil || next.Val() != "value of b" {
				t.Fatalf("the next read got %q, %v; want b's value", next.Val(), err)
			}
		})
	}
}

// On the automatic pipeline, the reads that wait while one is in flight go
// out together: with the server frozen under the first, 63 more reads
// leave in one pipeline, and each gets its own key's value. A read is
// known to be queued when its goroutine waits for the reply, in Send,
// after the command was handed to the pipeline.
func TestReadsThatWaitTogetherGoOutTogether(t *testing.T) {
	srv := redistest.Start(t)
	rdb, sends, all := senders(t, srv)
	ctx := context.Background()
	const reads = 64
	for i := range reads {
		if err := rdb.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	auto := all["auto"].(Auto)
	if err := auto.Send(ctx, redis.NewStringCmd(ctx, "get", "k0")); err != nil {
		t.Fatal(err) // the pipeline's connection, dialed and greeted before the count
	}
	srv.Hang(t)
	sends.Store(0)
	var wg sync.WaitGroup
	got := make([]string, reads)
	errs := make([]error, reads)
	read := func(i int) {
		defer wg.Done()
		get := redis.NewStringCmd(ctx, "get", "k"+strconv.Itoa(i))
		if errs[i] = auto.Send(ctx, get); errs[i] == nil {
			got[i], errs[i] = get.Result()
		}
	}
	wg.Add(reads)
	go read(0)
	redistest.WaitFor(t, "the first read to be in flight", func() bool { return sends.Load() >= 1 && auto.Pipe.Len() == 0 })
	for i := 1; i < reads; i++ {
		go read(i)
	}
	redistest.WaitFor(t, "every read queued, waiting for its reply", func() bool { return waiting() == reads })
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range reads {
		if errs[i] != nil || got[i] != strconv.Itoa(i) {
			t.Fatalf("read %d got %q, %v", i, got[i], errs[i])
		}
	}
	if n := sends.Load(); n != 2 {
		t.Errorf("%d reads went out in %d sends, want 2: the first, then the 63 that waited", reads, n)
	}
}
