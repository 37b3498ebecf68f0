package track

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"
)

// followEvery paces following's look at the caller's client's pool. On
// +switch-master go-redis closes the pool's connections to the old
// master, and the next command dials the new one; an instance whose hot
// reads are all served from memory may send no command for long. So when
// the pool has lost connections since the last look, or has none, a PING
// through the client (a nudge) makes it dial, and the switch is seen
// within the bound. A pool that keeps its connections costs the node
// nothing: the INFO server this once sent every followEvery cost the node
// 4.8 µs each, 25 times a second per instance.
const followEvery = VouchEvery

// errMoved ends a session whose client's commands reach another server.
var errMoved = errors.New("the client's commands reach another server now (a failover?)")

// following ends a session when the caller's Sentinel failover client
// dials a server other than the one the session tracks. Its master moves
// under a live pool: on the Sentinel's +switch-master the client closes
// its connections to the old master and writes to the new one at once,
// while the session, still on the old one, hears of those writes only
// once the old master is the new one's replica and has caught up, which
// took 50 ms and more on a loaded machine. A command reaches a server
// only on a connection the client dialed to it, so the session's coverage
// ends as that dial returns, before any command is sent on it: no copy
// is verified by a session the client's commands have left. And a PING
// through the client makes it dial when its pool lost connections (see
// followEvery).
//
// A plain client is not followed: its server does not move under it.
type following struct {
	addr  string // the server the session tracks, its connection's remote address
	moved atomic.Bool
	w     *dials
	lost  func()
	halt  context.CancelFunc
	done  chan struct{}
}

// start follows rdb, when it is a Sentinel failover client, until ctx
// ends or stop: lost is called once rdb dials a server other than addr.
func (f *following) start(ctx context.Context, rdb *redis.Client, addr string, lost func()) {
	if !isFailover(rdb) {
		return
	}
	f.addr, f.lost = addr, lost
	f.w = dialsOf(rdb)
	f.w.add(f)
	ctx, f.halt = context.WithCancel(ctx)
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		t := time.NewTicker(followEvery)
		defer t.Stop()
		had := uint32(0)
		for !f.moved.Load() {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if has := rdb.PoolStats().TotalConns; has > 0 && has >= had {
				had = has
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, breaker.AnswerWithin)
			rdb.Ping(cctx)
			cancel()
			had = rdb.PoolStats().TotalConns
		}
	}()
}

// stop ends the following and waits for its nudges.
func (f *following) stop() {
	if f.w == nil {
		return
	}
	f.w.remove(f)
	f.halt()
	<-f.done
}

// isFailover reports whether rdb is go-redis's NewFailoverClient.
func isFailover(rdb *redis.Client) bool {
	return rdb != nil && rdb.Options().Addr == "FailoverClient"
}

// dials watches a failover client's dials for the sessions that follow
// it. One is added to each client, once, as a hook, and kept for the
// client's life (go-redis cannot remove a hook): a client made and
// dropped again and again leaves one entry here each time.
type dials struct {
	mu sync.Mutex
	fs map[*following]struct{}
}

var watched sync.Map // *redis.Client → *dials

// dialsOf returns rdb's watch, added on first use.
func dialsOf(rdb *redis.Client) *dials {
	if w, ok := watched.Load(rdb); ok {
		return w.(*dials)
	}
	w, loaded := watched.LoadOrStore(rdb, &dials{fs: map[*following]struct{}{}})
	if !loaded {
		rdb.AddHook(w.(*dials))
	}
	return w.(*dials)
}

func (w *dials) add(f *following) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fs[f] = struct{}{}
}

func (w *dials) remove(f *following) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.fs, f)
}

// dialed ends the following sessions that track a server other than the
// one the client just connected to.
func (w *dials) dialed(to string) {
	w.mu.Lock()
	var gone []*following
	for f := range w.fs {
		if f.addr != to {
			gone = append(gone, f)
			delete(w.fs, f)
		}
	}
	w.mu.Unlock()
	for _, f := range gone {
		f.moved.Store(true)
		f.lost()
	}
}

// DialHook has the client's new connection judged before the client
// sends anything on it.
func (w *dials) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := next(ctx, network, addr)
		if err == nil {
			w.dialed(cn.RemoteAddr().String())
		}
		return cn, err
	}
}

func (w *dials) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (w *dials) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
