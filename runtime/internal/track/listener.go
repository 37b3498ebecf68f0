package track

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// listener keeps the session of one node alive while copies of the
// node's keys are kept, and no longer. Between the end of one session and
// the start of the next the node is uncovered, and the copies of its keys
// are unverified.
type listener struct {
	name string // for logs: the node address, or the channels
	n    *Node
	ctx  context.Context // ends when the node is no longer followed
	// dial connects a session that listens for cover.
	dial func(ctx context.Context, cover []string) (session, error)
	// restart ends the live session, whose cover no longer covers every
	// store (Hub.add); running is set while run runs. Both are guarded by
	// the hub's mu.
	restart context.CancelFunc
	running bool
}

// Session retry timing: the first retry is immediate (a killed connection
// on a healthy server is the common case), later ones back off.
const (
	sessionBackoff    = 50 * time.Millisecond
	sessionBackoffMax = time.Second
)

// Idle timing: a node's session ends, and the node is asked nothing
// more, once no copy of its keys has been kept for lingerFor, checked
// every idleEvery. A copy about to be kept starts it again (Node.Want).
const (
	lingerFor = 5 * time.Second
	idleEvery = time.Second
)

// follow has l keep n's session while copies of n's keys are kept: the
// node's Want starts it.
func (h *Hub) follow(l *listener) {
	l.n.idle.Store(true)
	l.n.OnWant(func() { h.wake(l) })
}

// wake runs l on a goroutine of the hub's unless it runs, or l's context
// ended.
func (h *Hub) wake(l *listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.running || l.ctx.Err() != nil {
		return
	}
	l.running = true
	l.n.wanted(h.opts.Now(), true)
	if !h.g.Go(func() { h.run(l.ctx, l) }) {
		l.running = false
	}
}

// idle reports whether no store keeps a copy of a key of n, and, if so,
// marks l stopped: the caller returns. A copy about to be kept after it
// does wakes l again; one whose Want came between the two looks, and found
// l still running, is seen by the second, which wakes l anew. (holds is
// not asked under mu: a store's Live holds its member's lock and keeps
// copies, whose Want takes mu.)
func (h *Hub) idle(l *listener) bool {
	if h.holds(l.n) {
		return false
	}
	h.mu.Lock()
	l.running = false
	l.n.wanted(h.opts.Now(), false)
	h.mu.Unlock()
	if h.holds(l.n) {
		h.wake(l)
	}
	return true
}

// stopped marks l stopped: its context ended.
func (h *Hub) stopped(l *listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l.running = false
}

// followInCluster has l keep its cluster node's session while any copy
// of the cluster's keys is kept: the first copy wakes every node's (a
// replica, or a master a slot moves to, must hear writes before the hub
// reads the topology again), and a node new to the topology starts at
// once while copies are kept.
func (h *Hub) followInCluster(l *listener) {
	l.n.idle.Store(true)
	l.n.OnWant(h.wakeCluster)
	h.mu.Lock()
	h.cluster[l] = struct{}{}
	h.mu.Unlock()
	if h.holds(nil) {
		h.wake(l)
	}
}

// wakeCluster wakes the listener of every node of the cluster.
func (h *Hub) wakeCluster() {
	h.mu.Lock()
	ls := make([]*listener, 0, len(h.cluster))
	for l := range h.cluster {
		ls = append(ls, l)
	}
	h.mu.Unlock()
	for _, l := range ls {
		h.wake(l)
	}
}

// holds reports whether a store keeps a copy of a key of n (its hot
// keys); on a cluster, or for n nil, of any key: a cluster's sessions all
// live while any copy is kept.
func (h *Hub) holds(n *Node) bool {
	if n == nil || h.Nodes.Followed() {
		return h.anyHot(func(string) bool { return true })
	}
	return h.owns(n)
}

// owns reports whether a store keeps a copy of a key n owns.
func (h *Hub) owns(n *Node) bool {
	return h.anyHot(func(k string) bool { return h.Nodes.Of(k) == n })
}

// anyHot reports whether a store keeps a copy of a key for which match
// holds.
func (h *Hub) anyHot(match func(key string) bool) bool {
	for _, m := range *h.members.Load() {
		found := false
		m.with(func(s Store) { found = slices.ContainsFunc(s.Hot(), match) })
		if found {
			return true
		}
	}
	return false
}

// lingering tells a listener when its node has had no copy for lingerFor,
// and its node whether it holds any (Node.Holding).
type lingering struct {
	h       *Hub
	n       *Node
	checked time.Time // when holds was last asked
	held    time.Time // when a copy was last seen kept
}

func newLingering(h *Hub, n *Node) *lingering {
	now := time.Now()
	return &lingering{h: h, n: n, checked: now, held: now}
}

// over reports, at most every idleEvery, whether the node has had no copy
// for lingerFor (Options.Linger in tests).
func (g *lingering) over() bool {
	now := time.Now()
	if now.Sub(g.checked) < min(idleEvery, g.h.linger()) {
		return false
	}
	g.checked = now
	if g.n != nil { // not followCluster's
		// Cleared first: a copy kept meanwhile sets it again.
		g.n.holding.Store(false)
		if g.h.owns(g.n) {
			g.n.holding.Store(true)
		}
	}
	if g.h.holds(g.n) {
		g.held = now
		return false
	}
	return now.Sub(g.held) >= g.h.linger()
}

// linger is lingerFor, or the test's Options.Linger.
func (h *Hub) linger() time.Duration {
	if h.opts.Linger > 0 {
		return h.opts.Linger
	}
	return lingerFor
}

// errIdle ends a session whose node has had no copy for lingerFor.
var errIdle = errors.New("no copy of the node's keys is kept")

// run keeps l's session until ctx ends, or l's node has had no copy for
// lingerFor.
func (h *Hub) run(ctx context.Context, l *listener) {
	idled := false // h.idle marked l stopped
	defer func() {
		if !idled {
			h.stopped(l)
		}
	}()
	backoff := time.Duration(0)
	var failing error // logged once per run of failures
	idle := newLingering(h, l.n)
	for ctx.Err() == nil {
		if idle.over() && h.idle(l) {
			idled = true
			return
		}
		h.mu.Lock()
		cover, gen := h.cover, h.gen
		sctx, restart := context.WithCancel(ctx)
		l.restart = restart
		h.mu.Unlock()
		s, err := l.dial(sctx, cover)
		if errors.As(err, new(noTracking)) {
			// The server does not know client tracking, or RESP3 for key
			// channels (before Redis 6, or CLIENT renamed away): listen on
			// the entities' channels, on which every build announces.
			h.opts.Log.Warn("hotkey: Redis does not support client tracking or RESP3; invalidating through the entities' Pub/Sub channels, which see only the repositories' own writes", "via", l.name, "err", err)
			restart()
			l.n.keyed.Store(false)
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
			}, voucher{now: h.opts.Now, stamps: h.Stamps, n: l.n, heard: l.n.Heard, tracked: func(keys []string) { h.tracked(l.n, keys) }, redirected: h.reread})
			h.each(func(st Store) { st.Live(sctx, l.n) })
			err = h.receive(sctx, s, idle)
			h.mu.Lock()
			delete(h.live, l)
			h.mu.Unlock()
			end()
			s.close()
			if ctx.Err() != nil {
				restart()
				return
			}
			if errors.Is(err, errIdle) {
				restart()
				if idled = h.idle(l); idled {
					return
				}
				continue // a copy came meanwhile
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

// receive hands the session's invalidations to the stores until it
// fails, or its node has had no copy for lingerFor (errIdle).
func (h *Hub) receive(ctx context.Context, s session, idle *lingering) error {
	for {
		keys, flush, err := s.next(ctx)
		switch {
		case err != nil:
			return err
		case flush || len(keys) > 0:
			h.changed(keys, flush)
		case idle.over():
			return errIdle
		}
	}
}
