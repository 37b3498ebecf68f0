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

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// senders are the three ways a read travels, over one client of srv that
// never times a read out, so a frozen server holds a read as long as the
// test wants; sends counts what the client sends, a command or a
// pipeline, as its hooks see them.
func senders(t *testing.T, srv *redistest.Server) (rdb *redis.Client, sends *atomic.Int64, all map[string]Sender) {
	t.Helper()
	rdb = redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	sends = new(atomic.Int64)
	rdb.AddHook(sendCounter{sends})
	all = map[string]Sender{}
	for name, way := range map[string]Way{"pool": Pooled, "lane": Lane, "piped": Piped} {
		s, err := For(rdb, way)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(Auto); ok != (way != Pooled) {
			t.Fatalf("For(a server's client, %s) = %T", name, s)
		}
		all[name] = s
	}
	return rdb, sends, all
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

// setValues sets each key to "value of" the key.
func setValues(t *testing.T, rdb *redis.Client, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := rdb.Set(context.Background(), k, "value of "+k, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// Each sender returns each command's reply: a value, a key's TTL in the
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

// A read on the pipeline whose server answers nothing returns when its
// context ends, with the context's error, although the pipeline runs the
// command on a context of its own; the reply that comes later is dropped,
// and the next read gets its own. Another read is held first, on the
// lane, so that the one given up goes on the pipeline.
// (Through the pool, a read ends with its context as go-redis lets it:
// the runtime's tests of a hung node cover it.)
func TestAReadGivenUpReturnsAtOnceAndItsReplyIsDropped(t *testing.T) {
	srv := redistest.Start(t)
	rdb, sends, all := senders(t, srv)
	ctx := context.Background()
	setValues(t, rdb, "a", "b", "c")
	auto := all["lane"].(Auto)
	srv.Hang(t)
	sends.Store(0)
	held := redis.NewStringCmd(ctx, "get", "a")
	heldDone := make(chan error, 1)
	go func() { heldDone <- auto.Send(ctx, held) }()
	redistest.WaitFor(t, "the held read to be sent", func() bool { return sends.Load() == 1 })

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- auto.Send(rctx, redis.NewStringCmd(rctx, "get", "b")) }()
	redistest.WaitFor(t, "the read to wait on the pipeline", func() bool { return waiting() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a read given up returned %v, want context.Canceled", err)
	}
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	if err := <-heldDone; err != nil || held.Val() != "value of a" {
		t.Fatalf("the held read got %q, %v; want a's value", held.Val(), err)
	}
	next := redis.NewStringCmd(ctx, "get", "c") // on the pipeline, after the dropped reply
	if err := auto.Pipe.Submit(ctx, next).Wait(); err != nil || next.Val() != "value of c" {
		t.Fatalf("the pipeline's next read got %q, %v; want c's value", next.Val(), err)
	}
}

// The first read takes the pool's lane; the reads that come while it is
// taken go out together on the automatic pipeline. With the server
// frozen, the first read goes through the pool, the second opens the
// pipeline's first batch, and the 62 after it leave in one pipeline; each
// gets its own key's value. A second lane would take the second read. A read is on the pipeline when its goroutine
// waits for the reply in Send, after the command was handed over.
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
	auto := all["lane"].(Auto)
	if err := auto.Pipe.Submit(ctx, redis.NewStringCmd(ctx, "get", "k0")).Wait(); err != nil {
		t.Fatal(err) // the pipeline's connection, dialed before the server freezes
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
	redistest.WaitFor(t, "the first read to be sent", func() bool { return sends.Load() == 1 })
	if n := waiting(); n != 0 {
		t.Fatalf("the first read waits on the pipeline (%d reads there), want it on the lane", n)
	}
	go read(1)
	redistest.WaitFor(t, "the second read to be sent", func() bool { return sends.Load() == 2 && waiting() == 1 })
	for i := 2; i < reads; i++ {
		go read(i)
	}
	redistest.WaitFor(t, "every other read queued on the pipeline", func() bool { return waiting() == reads-1 })
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range reads {
		if errs[i] != nil || got[i] != strconv.Itoa(i) {
			t.Fatalf("read %d got %q, %v", i, got[i], errs[i])
		}
	}
	if n := sends.Load(); n != 3 {
		t.Errorf("%d reads went out in %d sends, want 3: the first on the pool, the second, then the 62 that waited", reads, n)
	}
}

// A read takes the lane whenever it is free, whatever waits on the
// pipeline, so that a read does not wait for a batch in flight while
// the lane could carry it; the piped reference never takes it. With the
// server frozen: the first read takes the lane, the second the pipeline;
// the first is given up, which frees the lane; the third takes it,
// although the second still waits. Each read left gets its value.
func TestAReadTakesTheLaneWhenItIsFree(t *testing.T) {
	srv := redistest.Start(t)
	rdb, sends, all := senders(t, srv)
	ctx := context.Background()
	setValues(t, rdb, "a", "b", "c")
	lane, piped := all["lane"].(Auto), all["piped"].(Auto)
	if err := lane.Pipe.Submit(ctx, redis.NewStringCmd(ctx, "get", "a")).Wait(); err != nil {
		t.Fatal(err) // the pipeline's connection, dialed before the server freezes
	}
	srv.Hang(t)
	sends.Store(0)
	type read struct {
		get  *redis.StringCmd
		done chan error
	}
	send := func(ctx context.Context, s Sender, k string) read {
		r := read{redis.NewStringCmd(ctx, "get", k), make(chan error, 1)}
		go func() { r.done <- s.Send(ctx, r.get) }()
		return r
	}
	firstCtx, giveUp := context.WithCancel(ctx)
	first := send(firstCtx, lane, "a")
	redistest.WaitFor(t, "the first read to be sent", func() bool { return sends.Load() == 1 })
	second := send(ctx, lane, "b")
	redistest.WaitFor(t, "the second read to wait on the pipeline", func() bool { return sends.Load() == 2 && waiting() == 1 })
	giveUp()
	if err := <-first.done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first read, given up, returned %v", err)
	}
	third := send(ctx, lane, "c")
	redistest.WaitFor(t, "the third read to be sent or queued", func() bool { return sends.Load() == 3 || waiting() == 2 })
	if n := waiting(); n != 1 {
		t.Fatalf("with the lane free, a read waits on the pipeline (%d reads there), want it on the lane", n)
	}
	alone := send(ctx, piped, "a")
	redistest.WaitFor(t, "the piped read to wait on the pipeline", func() bool { return waiting() == 2 })
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	for k, r := range map[string]read{"b": second, "c": third, "a": alone} {
		if err := <-r.done; err != nil || r.get.Val() != "value of "+k {
			t.Errorf("the read of %s got %q, %v", k, r.get.Val(), err)
		}
	}
}
