package track

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"

	"github.com/redis/go-redis/v9"
)

// Store is what the transport tells about the copies of the repositories
// that share a hub (the rueidis CacheStore idea). The freshness protocol
// implements it; the hub never sees a key type or a value.
type Store interface {
	// Changed says someone wrote keys, all of them under the store's
	// prefix, or emptied the node (flush: every key changed).
	Changed(keys []string, flush bool)
	// Live says a session of n has started: the copies of n that no
	// session vouches for may be revalidated now.
	Live(ctx context.Context, n *Node)
	// Moved says the slots of the keys for which moved reports true have
	// a new owner, whose session has not vouched for them yet.
	Moved(moved func(key string) bool)
	// Settled says the caller's client follows the topology: the copies
	// Moved made unverified may be reloaded from their new owner.
	Settled(ctx context.Context)
	// Hot returns the keys the store holds copies of, which the caller's
	// client must send to the owners the hub knows.
	Hot() []string
	// Tracked says n's keyed session tracks keys from now on (Node.Keyed):
	// a write of one after this is heard, until its invalidation.
	Tracked(n *Node, keys []string)
}

// Options are what a hub is made with. Repositories share a hub when
// they pass the same client and the same Options apart from Log and
// Unavailable.
type Options struct {
	Mode string // Tracking, PubSub, KeyChannels or Off
	// Now is the clock of every stamp and verdict, and Clock what makes
	// it: nil for the wall clock. Hubs are shared only by the same client
	// pointer and a nil or the same pointer Clock.
	Now   func() time.Time
	Clock any
	// Log is the first joiner's: it says when a session or a node is lost
	// and back.
	Log *slog.Logger
	// Unavailable is the error a call refused by a breaker wraps.
	Unavailable error
	// TopologyEvery, for tests, paces the reading of a cluster's
	// topology, and Linger how long a node's session outlives its last
	// copy (lingerFor); 0 means the default.
	TopologyEvery, Linger time.Duration
	// Line, for tests, stands between each breaker and its line, to
	// hold or cut it, and Track between Node.Track and the keyed session
	// (track), to hold or drop what it asks; a hub made with either is
	// shared with nobody.
	Line  func(breaker.Line) breaker.Line
	Track func(keys []string, track func(keys []string))
}

// wrap returns the line a breaker pings on: l, unless a test stands
// between them.
func (o Options) wrap(l breaker.Line) breaker.Line {
	if o.Line != nil {
		return o.Line(l)
	}
	return l
}

// Stamps returns the stamps of the options' clock: the monotonic clock's
// for the wall clock (Clock nil), else Now's. A store computes them before
// it joins, to stamp its copies' expiries as the hub stamps its vouches.
func (o Options) Stamps() Stamps {
	if o.Clock == nil {
		return Stamps{}
	}
	return NewStamps(o.Now)
}

// Hub is the transport of one client: one session, one vouch and one
// breaker per node, shared by every repository on the client. It routes
// each invalidation to the stores whose prefix the key has.
type Hub struct {
	rdb   redis.UniversalClient
	opts  Options
	key   hubKey
	Nodes Nodes
	// Stamps is the clock of its nodes' vouches, which copies compare
	// with (see Stamps): the monotonic clock, or a test's.
	Stamps Stamps
	brk    breaker.Config
	probe  *redis.Client // the breaker's own client of a single server; nil otherwise
	line   line          // the connection Nodes.One's watcher pings on

	ctx    context.Context // ends when the last store leaves
	cancel context.CancelFunc
	g      group.Group // the hub's goroutines

	mu      sync.Mutex
	stores  map[Store]*member
	cover   []string                  // the prefixes sessions track (see coverOf)
	gen     uint64                    // moves on when cover grows
	live    map[*listener]func()      // ends the coverage of each live session
	cluster map[*listener]struct{}    // a cluster's nodes' (followInCluster)
	follows bool                      // followCluster runs
	moved   chan struct{}             // a node redirected a key: read the topology soon (reread)
	members atomic.Pointer[[]*member] // the stores now, for the calls to them

	up       atomic.Int32  // live sessions
	resets   atomic.Uint64 // sessions lost
	fallback atomic.Bool   // the server does not know tracking: announce writes instead
}

// member is a store joined to the hub. The hub's calls to it hold mu
// for reading, and Leave takes it to write: once Leave returns, the hub
// calls the store no more.
type member struct {
	prefix string
	s      Store
	mu     sync.RWMutex
	gone   bool
}

// with calls f with m's store, unless it left.
func (m *member) with(f func(Store)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.gone {
		f(m.s)
	}
}

type hubKey struct {
	rdb                   redis.UniversalClient
	mode                  string
	clock                 any
	topologyEvery, linger time.Duration
}

var hubs = struct {
	sync.Mutex
	m map[hubKey]*Hub
}{m: map[hubKey]*Hub{}}

// Join adds s, whose keys start with prefix, to the hub of rdb and opts,
// made and started on the first join. Tracking and key channels need a
// *redis.Client or a *redis.ClusterClient.
func Join(rdb redis.UniversalClient, opts Options, prefix string, s Store) (*Hub, error) {
	if keyedMode(opts.Mode) {
		switch rdb.(type) {
		case *redis.Client, *redis.ClusterClient:
		default:
			return nil, fmt.Errorf("%s needs a *redis.Client or *redis.ClusterClient, got %T", opts.Mode, rdb)
		}
	}
	k := hubKey{rdb: rdb, mode: opts.Mode, clock: opts.Clock, topologyEvery: opts.TopologyEvery, linger: opts.Linger}
	// Shared by identity only: a key of another kind may not even hash.
	shared := opts.Line == nil && opts.Track == nil && reflect.TypeOf(rdb).Kind() == reflect.Pointer &&
		(opts.Clock == nil || reflect.TypeOf(opts.Clock).Kind() == reflect.Pointer)
	hubs.Lock()
	defer hubs.Unlock()
	h := hubs.m[k]
	if h == nil || !shared {
		h = newHub(rdb, opts, k)
		if shared {
			hubs.m[k] = h
		}
		h.add(prefix, s)
		h.start()
		return h, nil
	}
	h.add(prefix, s)
	return h, nil
}

func newHub(rdb redis.UniversalClient, opts Options, k hubKey) *Hub {
	h := &Hub{rdb: rdb, opts: opts, key: k, Stamps: opts.Stamps(), stores: map[Store]*member{}, live: map[*listener]func(){}, cluster: map[*listener]struct{}{}, moved: make(chan struct{}, 1)}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.brk = breaker.Config{Now: opts.Now, Log: opts.Log, Spawn: h.g.Go, Unavailable: opts.Unavailable}
	var sock *breaker.Socket
	if one, ok := rdb.(*redis.Client); ok {
		h.probe, sock = probeClient(ConnOptions(one.Options()))
	}
	h.line = lineOf(rdb, h.probe, sock)
	if h.probe != nil {
		warmUp(h.ctx, h.line)
	}
	h.Nodes.One = NewNode(h.ctx, nodeName(rdb), opts.Now(), opts.wrap(h.line), &h.brk)
	return h
}

// nodeName names the server of rdb in errors and logs: by its address,
// or for a Sentinel failover client, whose master moves, by the master's
// name. A cluster's nodes are named by their addresses (watchNode).
func nodeName(rdb redis.UniversalClient) string {
	switch r := rdb.(type) {
	case *redis.Client:
		if o := r.Options(); o.Addr != "FailoverClient" {
			return o.Addr
		}
		return "the Sentinel master"
	case *redis.ClusterClient:
		return "the cluster"
	}
	return "Redis"
}

// start readies the sessions, each started when a copy of one of its
// node's keys is first about to be kept (Node.Want): one per node with
// tracking and key channels (each node of a cluster, once the first copy
// has the hub follow its topology), one for the entities' channels with
// Pub/Sub, none when invalidation is off.
func (h *Hub) start() {
	switch h.opts.Mode {
	case Off:
		h.Nodes.One.CoveredForever(h.opts.Now()) // refresh alone keeps copies fresh
	case PubSub:
		h.follow(&listener{name: "the invalidation channels", n: h.Nodes.One, ctx: h.ctx, dial: h.pubsubDial})
	case Tracking, KeyChannels:
		switch r := h.rdb.(type) {
		case *redis.Client:
			// A session tracks the keys of the copies kept, each once it
			// is asked (keyedSession). A Sentinel failover client's master
			// moves: the session checks that it still tracks the server the
			// client's own commands reach.
			o, n := ConnOptions(r.Options()), h.Nodes.One
			n.keyed.Store(true)
			h.follow(&listener{name: o.Addr, n: n, ctx: h.ctx, dial: func(ctx context.Context, _ []string) (session, error) {
				return keyed{o: o, keys: func() []string { return h.hot(n) }, follow: r, via: h.opts.Track, channels: h.opts.Mode == KeyChannels}.listener()(ctx)
			}})
		case *redis.ClusterClient:
			// Until the topology is read, every key is on Nodes.One, which
			// no session covers: its first Want starts following it.
			h.Nodes.One.idle.Store(true)
			h.Nodes.One.OnWant(func() { h.followFrom(r) })
		}
	}
}

// pubsubDial subscribes to the channel of every prefix in cover.
func (h *Hub) pubsubDial(ctx context.Context, cover []string) (session, error) {
	channels := make([]string, len(cover))
	for i, p := range cover {
		channels[i] = Channel(p)
	}
	return pubsubListener(h.rdb, channels)(ctx)
}

// add routes the keys under prefix to s. When the sessions do not listen
// for prefix yet (Pub/Sub's channels), their coverage ends here, before
// any of s's reads can begin, and they start again listening for it too:
// a session that did not listen for the prefix never vouches for s's
// copies.
func (h *Hub) add(prefix string, s Store) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stores[s] = &member{prefix: prefix, s: s}
	h.setMembers()
	cover := h.coverOf()
	if slices.Equal(cover, h.cover) || keyedMode(h.opts.Mode) && !h.fallback.Load() {
		return // a keyed session tracks keys as their copies are kept, whatever their prefix
	}
	h.cover = cover
	h.gen++
	for l, end := range h.live {
		end()
		l.restart()
	}
}

// coverOf returns what the sessions must listen for: with tracking, the
// fewest prefixes that cover every store's (no prefix starts another;
// Redis refuses overlapping ones), with Pub/Sub every store's own channel.
// The caller holds h.mu.
func (h *Hub) coverOf() []string {
	var ps []string
	for _, m := range h.stores {
		ps = append(ps, m.prefix)
	}
	slices.Sort(ps)
	ps = slices.Compact(ps)
	if h.opts.Mode == PubSub || h.fallback.Load() {
		return ps
	}
	var cover []string
	for _, p := range ps { // sorted: a prefix comes before every key it starts
		if len(cover) == 0 || !strings.HasPrefix(p, cover[len(cover)-1]) {
			cover = append(cover, p)
		}
	}
	return cover
}

func (h *Hub) setMembers() {
	ms := make([]*member, 0, len(h.stores))
	for _, m := range h.stores {
		ms = append(ms, m)
	}
	h.members.Store(&ms)
}

// Leave removes s, and returns once the hub calls it no more. The last
// store to leave stops the hub's sessions and
// breakers and waits for their goroutines.
func (h *Hub) Leave(s Store) {
	hubs.Lock()
	h.mu.Lock()
	m := h.stores[s]
	delete(h.stores, s)
	h.setMembers()
	last := len(h.stores) == 0
	if last {
		if hubs.m[h.key] == h {
			delete(hubs.m, h.key)
		}
	}
	h.mu.Unlock()
	hubs.Unlock()
	if m != nil {
		m.mu.Lock() // waits for the calls to s in flight
		m.gone = true
		m.mu.Unlock()
	}
	if !last {
		return
	}
	h.cancel()
	h.g.Close()
	h.line.Close()
	if h.probe != nil {
		h.probe.Close()
	}
}

// Announces reports whether writes must be announced, on their entity's
// channel (Channel) and their key's (KeyChannel): with Pub/Sub of either
// kind, or tracking on a server that does not know it.
func (h *Hub) Announces() bool {
	return h.opts.Mode == PubSub || h.opts.Mode == KeyChannels || h.fallback.Load()
}

// Mode returns the invalidation in effect: Pub/Sub when tracking, or key
// channels, fell back to it.
func (h *Hub) Mode() string {
	if h.fallback.Load() {
		return PubSub
	}
	return h.opts.Mode
}

// Live returns how many sessions are live, and Resets how many were lost.
func (h *Hub) Live() int      { return int(h.up.Load()) }
func (h *Hub) Resets() uint64 { return h.resets.Load() }

// changed routes a batch of invalidated keys to the stores whose prefix
// each key has, and a flush to every store.
func (h *Hub) changed(keys []string, flush bool) {
	if flush {
		h.each(func(s Store) { s.Changed(nil, true) })
		return
	}
	h.route(keys, func(s Store, mine []string) { s.Changed(mine, false) })
}

// tracked routes the keys n's keyed session confirmed it tracks to the
// stores whose prefix each key has: those n owns, whose copies it
// vouches for. A cluster replica's confirmations are its own: they make
// no copy verified.
func (h *Hub) tracked(n *Node, keys []string) {
	keys = slices.DeleteFunc(keys, func(k string) bool { return h.Nodes.Of(k) != n })
	h.route(keys, func(s Store, mine []string) { s.Tracked(n, mine) })
}

// route calls f with each store that has keys under its prefix, and
// those keys.
func (h *Hub) route(keys []string, f func(s Store, mine []string)) {
	for _, m := range *h.members.Load() {
		var mine []string
		for _, k := range keys {
			if strings.HasPrefix(k, m.prefix) {
				mine = append(mine, k)
			}
		}
		if len(mine) > 0 {
			m.with(func(s Store) { f(s, mine) })
		}
	}
}

// hot returns the keys of n the stores hold copies of: of n's master,
// for a cluster replica.
func (h *Hub) hot(n *Node) []string {
	if m := n.master.Load(); m != nil {
		n = m
	}
	var keys []string
	for _, m := range *h.members.Load() {
		m.with(func(s Store) {
			for _, k := range s.Hot() {
				if h.Nodes.Of(k) == n {
					keys = append(keys, k)
				}
			}
		})
	}
	return keys
}

// each calls f with every store, one at a time.
func (h *Hub) each(f func(Store)) {
	for _, m := range *h.members.Load() {
		m.with(f)
	}
}

// errRedial is the cause Suspect is given when a session's client
// redials its lost connection by itself.
var errRedial = errors.New("the invalidation connection was lost")

// Probe returns the breaker's own client of a single server, nil on a
// cluster, whose nodes have one each: tests hook its dials.
func (h *Hub) Probe() *redis.Client { return h.probe }
