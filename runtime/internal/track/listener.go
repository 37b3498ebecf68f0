package track

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// listener keeps the session of one node alive. Between the end of one
// session and the start of the next the node is uncovered, and the copies
// of its keys are unverified.
type listener struct {
	name string // for logs: the node address, or the channels
	n    *Node
	// dial connects a session that listens for cover.
	dial func(ctx context.Context, cover []string) (session, error)
	// restart ends the live session, whose cover no longer covers every
	// store (Hub.add); guarded by the hub's mu.
	restart context.CancelFunc
}

// Session retry timing: the first retry is immediate (a killed connection
// on a healthy server is the common case), later ones back off.
const (
	sessionBackoff    = 50 * time.Millisecond
	sessionBackoffMax = time.Second
)

// listen runs l on a goroutine of the hub's until ctx ends.
func (h *Hub) listen(ctx context.Context, l *listener) {
	h.g.Go(func() { h.run(ctx, l) })
}

func (h *Hub) run(ctx context.Context, l *listener) {
	backoff := time.Duration(0)
	var failing error // logged once per run of failures
	for ctx.Err() == nil {
		h.mu.Lock()
		cover, gen := h.cover, h.gen
		sctx, restart := context.WithCancel(ctx)
		l.restart = restart
		h.mu.Unlock()
		s, err := l.dial(sctx, cover)
		if errors.As(err, new(noTracking)) {
			// The server does not know client tracking (before Redis 6, or
			// CLIENT renamed away): announce our own writes instead.
			h.opts.Log.Warn("hotkey: Redis does not support client tracking; invalidating through Pub/Sub, which sees only the repositories' own writes", "via", l.name, "err", err)
			restart()
			h.mu.Lock()
			h.fallback.Store(true)
			h.cover = h.coverOf()
			h.gen++
			h.mu.Unlock()
			l.dial = h.pubsubDial
			continue
		}
		if err == nil {
			end, ok := h.begin(l, gen)
			if !ok { // a store joined meanwhile that cover misses
				s.close()
				restart()
				continue
			}
			if failing != nil {
				h.opts.Log.Info("hotkey: invalidation connection back", "via", l.name)
				failing = nil
			}
			backoff = 0
			s.arm(func() {
				// The session's client redials: its connection is gone,
				// and the node may be too. Ask it now, not when go-redis
				// gives up redialling.
				end()
				h.g.Go(func() { l.n.Suspect(errRedial) })
			}, voucher{now: h.opts.Now, stamps: h.Stamps, n: l.n, heard: l.n.Heard})
			h.each(func(st Store) { st.Live(sctx, l.n) })
			err = h.receive(sctx, s)
			h.mu.Lock()
			delete(h.live, l)
			h.mu.Unlock()
			end()
			s.close()
			if ctx.Err() != nil {
				restart()
				return
			}
			if sctx.Err() != nil { // restarted to track another prefix
				continue
			}
			restart()
			if breaker.ConnectionFailure(err) {
				l.n.Suspect(err)
			}
			h.resets.Add(1)
		} else {
			restart()
			if ctx.Err() == nil {
				l.n.Failed(ctx, err)
			}
		}
		if ctx.Err() != nil {
			return
		}
		if failing == nil {
			h.opts.Log.Warn("hotkey: invalidation connection lost; hot keys are read from Redis until it is back", "via", l.name, "err", err)
			failing = err
		}
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		backoff = min(max(2*backoff, sessionBackoff), sessionBackoffMax)
	}
}

// begin counts l's new session live, unless the cover it dialed for (of
// generation gen) no longer covers every store, and returns the function
// that ends its coverage, once.
func (h *Hub) begin(l *listener, gen uint64) (end func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen != gen {
		return nil, false
	}
	now := h.opts.Now()
	l.n.Started(now, h.Stamps.Of(now))
	h.up.Add(1)
	end = sync.OnceFunc(func() {
		h.up.Add(-1)
		l.n.Ended(h.opts.Now())
	})
	h.live[l] = end
	return end, true
}

func (h *Hub) receive(ctx context.Context, s session) error {
	for {
		keys, flush, err := s.next(ctx)
		switch {
		case err != nil:
			return err
		case flush || len(keys) > 0:
			h.changed(keys, flush)
		}
	}
}
