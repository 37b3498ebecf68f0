// Package fresh holds the one protocol that decides whether a local copy
// may be kept, and whether it may be served without asking Redis, and the
// hot set whose keys have copies (hot.go). Every path that touches a copy
// (Get, GetMany, Set, Del, refresh, invalidation, demotion, the loss and
// return of an invalidation session, a cluster slot moving) goes through
// the methods of Copies, and nothing else writes to the local store.
//
// The invariant. A session is live from the moment CLIENT TRACKING (or the
// Pub/Sub subscription) is acknowledged until the runtime notices it is
// gone. A copy produced by a Redis command C may be served without asking
// Redis only if
//   - C was sent while a session covering the key's node was live, and,
//     where the session tracks only the keys it is asked for (a keyed
//     node: any node with tracking), after it confirmed it tracks the
//     key (tracking),
//   - no session of that node has started or ended since C was sent (the
//     node's state, an epoch), and
//   - no invalidation of the key has been processed since C was sent (the
//     key's generation).
//
// A copy is served only while it is its entry's: one replaced or dropped
// is retired as it leaves, for a reader may hold it still (retire).
//
// And it is served only while the session shows it keeps up: it stamps a
// PING on its connection every track.VouchEvery, and each answer, handled after
// every invalidation Redis sent before it, vouches for the node up to the
// stamp (vouched). A copy is served without asking Redis only within
// vouchFor of that (the argument is vouchFor's). A session whose
// goroutine is held up, by the scheduler, a garbage collection or a
// frozen server, stops vouching on its own: a healthy session's goroutine
// can handle an invalidation later than the bound on busy cores.
//
// A token records the generation and the node's state just before C is
// sent; keep compares them after C returns. A copy whose node's state has
// moved on is unverified: it is served only while Redis cannot be reached
// (a stale read), until refresh_failures reloads have failed, and never
// when Redis answers. When a session starts, the node's unverified copies
// are revalidated in one batch (refresh: unchanged bytes keep the copy,
// changed bytes replace it, a missing key drops it).
//
// Why a generation per key and a state per node, and not per connection as
// go-redis's client-side cache has it: replies arrive on the caller's
// pooled connections while invalidations arrive on a subscriber of our
// own, so nothing orders the two but the order in which this process
// handles them. A read that started before an invalidation was handled may
// carry the old value, and the generation says so whatever the order of
// arrival.
package fresh

import (
	"context"
	"hash/maphash"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Yiling-J/theine-go"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

// A node (track.Node) is one Redis server whose writes must reach the
// local copies; the transport (runtime/internal/track) keeps its state
// and its vouched stamp, and this file reads them.

// vouchFor is how long after the stamp of the last answered PING
// (track.Node.Vouched) a copy is served locally: the 50 ms bound itself.
// The argument: a write acknowledged at a, more than the bound before a
// read began at r, was applied by Redis before a. The read checks at
// c >= r, and serves only if the PING of the answer it loaded was stamped
// at p > c - vouchFor >= r - 50 ms > a, before the PING was written. So
// Redis applied the write before it read the PING, queued the write's
// invalidation before the PING's answer on the session's connection, and
// the session handled it before it stored p (fresh loads p first, then
// the copy's state). A session PINGs every track.VouchEvery (40 ms), so a
// prompt answer keeps its copies served with 10 ms to spare.
const vouchFor = 50 * time.Millisecond

// Params is what the protocol takes of the Cache's configuration (see
// runtime.Config for each).
type Params struct {
	LocalTTL, NullTTL time.Duration
	RefreshFailures   int
	StaleReads        bool
	// OnInvalidate, for tests, sees every batch of invalidated keys.
	OnInvalidate func(keys []string)
}

// Counts are the protocol's counters, which the Cache's Stats report.
type Counts struct {
	Invalidations, RefreshErrors atomic.Uint64
}

// Clock is the Cache's clock (config.Clock), as far as the protocol
// reads it.
type Clock interface{ Now() time.Time }

// Copies are the hot keys' local copies, and the one protocol above
// that decides whether one may be kept and served. The Cache holds them
// by value, so the read path's freshness check costs no extra pointer;
// the transport tells them what changed (track.Store, at the end of this file).
type Copies[K comparable, V any] struct {
	Local *theine.Cache[K, *Copy[V]]
	Det   *Detector[K] // the hot set
	Nodes *track.Nodes
	Gens  *Generations
	Cfg   Params
	Clock Clock
	// Stamps is the clock of the freshness check, its hub's (see
	// track.Stamps): one reading of the monotonic clock per local hit.
	Stamps track.Stamps
	Clone  func(*V) *V
	Name   func(K) string
	Count  *Counts
	// Reload reads the copies of es again (the runtime's refresh), for a
	// session that starts and slots that moved.
	Reload func(ctx context.Context, es []*Entry[K])
	Done   context.Context // the Cache's: ends at Close
	// PassedOver counts local hits not served because the copy was
	// unverified while Redis answered, or its key had expired; theine
	// counted them as hits.
	PassedOver atomic.Uint64
	// moved holds the copies whose slot changed owner, reloaded once the
	// caller's client follows (Settled).
	mu    sync.Mutex
	moved map[*Entry[K]]struct{}
}

// Entry is the runtime's record of one hot key. Its mutex orders every
// change of the key's local copy (see Keep): a copy is stored only
// if nothing invalidated, wrote, deleted or demoted the key since the
// value was read from Redis, so a slow reader can never put back a value
// older than a newer write.
type Entry[K comparable] struct {
	K     K
	Key   string // the Redis key
	Since time.Time
	// Hits counts local hits since promotion, sampled like the recorder
	// (see hit), so cores reading the key do not contend on it.
	Hits atomic.Uint64

	Mu         sync.Mutex
	dead       bool      // demoted: nothing may be stored for it any more
	registered bool      // holds a local copy that refresh reloads
	held       *copyMeta // the local copy's metadata, nil when none was stored
	failures   int       // consecutive refresh failures
	tracked    tracking  // on a keyed node, when its session last confirmed it tracks the key
}

// genStripes is the number of key generations: invalidations are counted
// per stripe of the key space, so every key has a generation without a
// map entry per key. Two keys that share a stripe only cost each other a
// store now and then.
const genStripes = 1 << 14

// Generations counts, per stripe of Redis keys, the invalidations, writes,
// deletes and demotions processed here.
type Generations struct {
	Seed maphash.Seed
	g    [genStripes]atomic.Uint64
}

func (g *Generations) Of(key string) *atomic.Uint64 {
	return &g.g[maphash.String(g.Seed, key)&(genStripes-1)]
}

// bumpAll moves every generation on: FLUSHALL emptied the keyspace.
func (g *Generations) bumpAll() {
	for i := range g.g {
		g.g[i].Add(1)
	}
}

// Token is what a reader knew just before it sent a command: the key's
// generation and its node's state, and when (a stamp, see track.Stamps).
type Token struct {
	gen   uint64
	N     *track.Node
	state uint64
	at    int64
}

// Begin returns the token of a command about to be sent for key.
func (s *Copies[K, V]) Begin(key string) Token {
	n := s.Nodes.Of(key)
	// The generation is read first: an invalidation handled after this
	// line moves it on, whatever the state does.
	gen := s.Gens.Of(key).Load()
	return Token{gen: gen, N: n, state: n.State(), at: s.Stamps.Now()}
}

// Shares reports whether a caller holding b may take the result of a
// read begun with a: both saw the same world (no invalidation, write or
// session change was handled between them), and a began within vouchFor
// before b. The first alone is not enough: while a session is held up,
// it handles nothing, and a read sent long before, answered before a
// write, would be shared with a read that began after the write. The
// argument is vouchFor's, with a's stamp for the PING's: a write
// acknowledged more than the bound before b began was applied before a
// was sent.
func (a Token) Shares(b Token) bool {
	return a.gen == b.gen && a.N == b.N && a.state == b.state && b.at-a.at < int64(vouchFor)
}

// verifiedState is the state a copy of e's key made under t is verified
// for, or 0 when no session covered t's command as it was sent, or the
// key's slot has moved to another node since, or, on a keyed node, the
// key was not tracked when the command was sent: its tracking is then
// asked for, and the next copy verified. Whether the session has ended
// since is verified's to tell: a state, once left, never comes back. The
// caller holds e.mu.
func (s *Copies[K, V]) verifiedState(e *Entry[K], t Token) uint64 {
	if t.state&1 == 0 || s.Nodes.Of(e.Key) != t.N {
		return 0
	}
	if t.N.Keyed() && e.tracked != (tracking{n: t.N, state: t.state, gen: t.gen}) {
		t.N.Track(e.Key)
		return 0
	}
	return t.state
}

// tracking is when a keyed node's session confirmed it tracks a key: the
// node (a cluster's slot moves), its state, and the key's generation
// that confirmation moved it to. A command whose token carries all three
// was sent after Redis tracked the key, and no invalidation of the key
// was handled since (which would have moved the generation on, and the
// server forgets a key as it sends its invalidation).
type tracking struct {
	n          *track.Node
	state, gen uint64
}

// Confirmed returns the node state and the key generation of the last
// confirmation that e's key is tracked; 0, 0 when none was. The caller
// holds e.Mu.
func (e *Entry[K]) Confirmed() (state, gen uint64) { return e.tracked.state, e.tracked.gen }

// Tracked records that n's keyed session tracks keys from now on. The
// generation moves on, so no command sent before, which Redis may have
// run before it tracked the key, keeps a verified copy; it moves under
// the entry's lock, with the record, so that a command sent after it
// finds the record when it keeps its copy (else it would keep it
// unverified, in place of a verified one, and ask for tracking again).
func (s *Copies[K, V]) Tracked(n *track.Node, keys []string) {
	state, hot := n.State(), s.Det.Set.Load()
	for _, key := range keys {
		e := hot.byName[key]
		if e == nil {
			s.Gens.Of(key).Add(1)
			continue
		}
		e.Mu.Lock()
		e.tracked = tracking{n: n, state: state, gen: s.Gens.Of(key).Add(1)}
		e.Mu.Unlock()
	}
}

// copyMeta is what the runtime knows of a local copy besides its value.
type copyMeta struct {
	n *track.Node
	// state is the node state the copy is verified under, 0 when it is
	// unverified; revoke sets it to 0.
	state atomic.Uint64
	// superseded says a write of the key was heard while the node that
	// owns the key could not be reached: somebody else reaches the key's
	// master, so this copy is older than what Redis holds, and it is never
	// served as a stale read. Only a new copy, or a reload that finds the
	// same bytes, clears it.
	superseded atomic.Bool
	// heard is one more than the node's answers when a write of the key
	// was heard, 0 when none was.
	heard atomic.Uint64
	// expires is when Redis expires the key, as a stamp (see
	// track.Stamps), no later than Redis does (see layout.ExpiresAt); 0
	// for a key without a TTL, or one whose TTL the entity does not learn
	// (learnsTTL). A reload that finds the same bytes sets it again.
	expires atomic.Int64
	sum     uint64 // hash of the bytes it was decoded from; 0 for unknown
	Size    int    // encoded size, counted once when stored
}

// Copy is what the local store holds for a hot key: a decoded value
// (nil for a row known to be absent) and how far it can be trusted.
type Copy[V any] struct {
	Val  *V
	Meta copyMeta
}

// Verified reports whether the copy is vouched for by a live session
// (or by refresh, with invalidation off).
func (m *copyMeta) Verified() bool {
	s := m.state.Load()
	return s != 0 && s == m.n.State()
}

// Overtaken reports whether a write of the copy's key is known to have
// reached n, the key's node now, while n could answer: one heard while n
// was believed down (superseded), or one n answered after while n still
// answers, however late (a slow node). Such a copy is older than what
// Redis holds, and Redis can say so: it is never served as a stale read,
// and while n answers its reads wait for Redis a while (loadCall.patient).
// Once n is silent (killed, frozen), a copy written just before is served
// again: an outage right after a write still finds the key in memory,
// which a rule without that exception would cost a share of the hot
// reads after every kill. Under latency, a write heard just before the
// breaker opened would have its old copy served late without the rule.
func (m *copyMeta) Overtaken(n *track.Node, now time.Time) bool {
	h := m.heard.Load()
	return m.superseded.Load() || h != 0 && n.Answers()+1 != h && n.Answering(now)
}

// Fresh reports whether the copy may be served without asking Redis: it
// is verified, its session vouched for its node within vouchFor, and its
// key has not expired (live). It is the read path's whole freshness
// check: four atomic loads and a clock reading.
func (s *Copies[K, V]) Fresh(m *copyMeta) bool {
	vouched := m.n.Vouched() // first: a session stores it after handling what came before
	if !m.Verified() {
		return false
	}
	now := s.Stamps.Now()
	return now-vouched < int64(vouchFor) && m.live(now)
}

// VouchAge is how long ago the session of m's node last vouched for it:
// how fresh a read served from m is at least, below vouchFor when Fresh.
func (s *Copies[K, V]) VouchAge(m *copyMeta) time.Duration {
	return time.Duration(s.Stamps.Now() - m.n.Vouched())
}

// live reports whether Redis still holds the copy's key at now, a stamp: a copy is never served, fresh or stale, at or after
// the expiry Redis holds for its key. Nothing else would stop it: Redis 7.0
// sends the invalidation of an expired key only when its active expiry
// reclaims the key, tens of milliseconds after a GET would have answered
// nil, and invalidate=pubsub and off hear of no expiry at all, so a
// session token, a lock or a rate-limit window would be served after it
// ended. At expiry the read goes to Redis as if there were no copy.
func (m *copyMeta) live(now int64) bool {
	exp := m.expires.Load()
	return exp == 0 || now < exp
}

// Servable reports whether a hit on k's copy m may be answered locally,
// and whether that answer is a stale read: an unverified copy is served
// only while the node that owns the key now cannot be reached, as seen
// within breaker.StaleLease (Breaker.Down), is silent, not merely slow
// (Breaker.Silent: a slow node takes writes whose invalidations are on
// their way), and no write of the key was heard since it could not. Not the copy's own node: on a cluster whose
// master died and whose replica took the key over, the dead master stays
// unreachable while the new one holds newer writes; and an instance that
// learns of the promotion later than the others still hears their writes
// from the promoted replica's session (superseded). With StaleReads off,
// an unverified copy is never served.
func (s *Copies[K, V]) Servable(ctx context.Context, k K, m *copyMeta) (ok, stale bool) {
	if s.Fresh(m) {
		return true, false
	}
	if n, now := s.Nodes.Of(s.Name(k)), s.Clock.Now(); s.Cfg.StaleReads && m.live(s.Stamps.Of(now)) && !m.Overtaken(n, now) && n.Silent(now) && n.Down(ctx) {
		return true, true
	}
	return false, false
}

// Keep stores v, produced by a command sent under t, as e's local copy,
// unless the key was invalidated, written or demoted since t: then v may
// be older than what Redis holds, and the next read asks again. sum and
// size describe the bytes v was decoded from, exp the key's expiry as
// the Clock's UnixNano (see layout.ExpiresAt). A read that did not ask
// for the key's TTL (exp layout.Unasked) keeps nothing: a copy must not
// outlive its key. It reports whether it stored.
func (s *Copies[K, V]) Keep(e *Entry[K], t Token, v *V, sum uint64, size int, exp int64) bool {
	if exp == layout.Unasked {
		return false
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	if e.dead || s.Gens.Of(e.Key).Load() != t.gen {
		return false
	}
	return s.putLocked(e, t, v, sum, size, s.Stamps.FromUnixNano(exp))
}

// putLocked puts v in the local store as e's copy, verified as far as t
// allows, until exp, a stamp, and reports whether it did: an absent row
// is kept only for NullTTL, and without one drops the copy. The caller
// holds e.mu and has checked the generation.
func (s *Copies[K, V]) putLocked(e *Entry[K], t Token, v *V, sum uint64, size int, exp int64) bool {
	ttl := s.Cfg.LocalTTL
	if v == nil {
		if s.Cfg.NullTTL == 0 {
			s.dropLocked(e)
			return false
		}
		ttl = min(ttl, s.Cfg.NullTTL)
	}
	cp := &Copy[V]{Val: v, Meta: copyMeta{n: t.N, sum: sum, Size: size}}
	cp.Meta.state.Store(s.verifiedState(e, t))
	cp.Meta.expires.Store(exp)
	s.Local.SetWithTTL(e.K, cp, 1, ttl)
	retire(e.held)
	e.held = &cp.Meta
	e.registered = true
	n := s.Nodes.Of(e.Key)
	n.Holding() // its session vouches for the copy
	if n.State()&1 == 0 {
		n.Want() // no session covers the node yet: it starts, and vouches for the copy (Live)
	}
	return true
}

// Reverify marks e's copy verified under t, until exp, when the bytes a
// reload read under t hash to the copy's: the copy is current, and
// decoding the same bytes again would only cost time. It reports whether
// it did. A demoted entry holds no copy (forgetLocked).
func (s *Copies[K, V]) Reverify(e *Entry[K], t Token, sum uint64, exp int64) bool {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	if e.held == nil || e.held.sum != sum || e.held.n != t.N || s.Gens.Of(e.Key).Load() != t.gen {
		return false
	}
	e.held.expires.Store(s.Stamps.FromUnixNano(exp))
	e.held.state.Store(s.verifiedState(e, t))
	e.held.superseded.Store(false)
	e.held.heard.Store(0)
	e.failures = 0
	return true
}

// Wrote applies this process's own acknowledged write of k (key) to the
// local copy: v becomes the copy, until exp (see layout.WroteExpiry),
// verified when nothing touched the key since t, the token taken before
// the write was sent, unverified otherwise. A nil v is a delete, which drops the
// copy. The generation moves on either way, so no read begun before the
// write can store or share its older result.
func (s *Copies[K, V]) Wrote(k K, key string, t Token, v *V, size int, exp int64) {
	exp = s.Stamps.FromUnixNano(exp)
	s.ownWrite(k, key, t, func(e *Entry[K], fresh bool) {
		switch {
		case e.dead || v == nil:
			s.dropLocked(e)
		case fresh:
			s.putLocked(e, t, s.Clone(v), 0, size, exp)
		default:
			// Another write may have landed after ours: ours is kept, but
			// unverified, since it is newer than the copy it replaces and
			// an outage now should still find the key in memory.
			s.putLocked(e, Token{N: t.N}, s.Clone(v), 0, size, exp)
		}
	})
}

// ownWrite moves key's generation on for this process's own
// acknowledged write of k, sent under t, and when k is hot calls apply
// with its entry, locked, and whether nothing touched the key since t.
func (s *Copies[K, V]) ownWrite(k K, key string, t Token, apply func(e *Entry[K], fresh bool)) {
	g := s.Gens.Of(key)
	e := s.Det.Lookup(k)
	if e == nil {
		g.Add(1)
		return
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	fresh := g.Load() == t.gen
	g.Add(1)
	apply(e, fresh)
}

// Uncertain applies a write of k (key) that failed after it may have
// reached Redis: the copy may be stale, so it is unverified, and no read
// begun before can store or share its result.
func (s *Copies[K, V]) Uncertain(k K, key string) {
	s.Gens.Of(key).Add(1)
	if e := s.Det.Lookup(k); e != nil {
		s.revoke(e)
	}
}

// Applied applies this process's own acknowledged write of k (key) that
// changes part of the value (a collection's items) rather than replacing
// it: apply makes the new value from the copy's, t is the token taken
// before the write was sent. The copy becomes what apply makes: verified
// when the copy was and nothing touched the key since t (it then holds
// what Redis holds), unverified otherwise, but never older than this
// write, so it is still served while Redis cannot be reached: an outage
// right after a write finds the key in memory, with the write in it;
// unless the copy it was made from was overtaken by another's write,
// which the new one lacks as well (Overtaken).
// Without a copy whose value it can change, or without apply, the copy is
// older than what Redis holds: unverified and never served as a stale
// read (superseded). No read begun before can store or share its result.
func (s *Copies[K, V]) Applied(k K, key string, t Token, apply func(*V) *V) {
	s.ownWrite(k, key, t, func(e *Entry[K], fresh bool) {
		cp, held := s.Local.Get(k)
		if held {
			s.PassedOver.Add(1) // theine counted a hit; no read was served
		}
		if apply == nil || e.dead || !held || e.held != &cp.Meta {
			s.revokeLocked(e)
			if e.held != nil {
				e.held.superseded.Store(true)
			}
			return
		}
		if !fresh || !cp.Meta.Verified() {
			t = Token{N: t.N}
		}
		superseded, heard := cp.Meta.superseded.Load(), cp.Meta.heard.Load()
		s.putLocked(e, t, apply(cp.Val), 0, cp.Meta.Size, cp.Meta.expires.Load())
		// Made from a copy older than what Redis holds (another's write
		// heard), the new one is older too: it lacks that write.
		if e.held != nil {
			e.held.superseded.Store(superseded)
			e.held.heard.Store(heard)
		}
	})
}

// Invalidate marks the copies of keys, which someone wrote, unverified:
// the next read asks Redis, and the old copy is served only if Redis
// cannot be asked (a stale read, as for any unverified copy), so an outage
// right after a write still finds every hot key in memory. Invalidations
// are not trusted to carry the new value, so nothing is reloaded here.
func (s *Copies[K, V]) Invalidate(keys []string) {
	for _, key := range keys {
		// The generation moves first and the hot set is read after: a key
		// promoted meanwhile either sees the new generation when it stores,
		// or is found here.
		s.Gens.Of(key).Add(1)
		if e := s.Det.Set.Load().byName[key]; e != nil {
			s.overwritten(e)
			s.Count.Invalidations.Add(1)
		}
	}
}

// flushed marks every copy unverified: FLUSHALL or FLUSHDB emptied the
// node.
func (s *Copies[K, V]) flushed() {
	s.Gens.bumpAll()
	for _, e := range s.Det.Set.Load().ByKey {
		s.overwritten(e)
		s.Count.Invalidations.Add(1)
	}
}

// overwritten revokes e's copy, which a write heard by a session made
// old. A write heard while the key's node is believed unreachable was
// acknowledged by a node this process does not reach or does not know
// yet (a promoted replica, on a cluster): the copy is superseded, and a
// stale read would return a value older than an acknowledged write.
func (s *Copies[K, V]) overwritten(e *Entry[K]) {
	n := s.Nodes.Of(e.Key)
	down := n.Unreachable()
	e.Mu.Lock()
	defer e.Mu.Unlock()
	s.revokeLocked(e)
	if e.held != nil {
		e.held.heard.Store(n.Answers() + 1)
		if down {
			e.held.superseded.Store(true)
		}
		if n.Keyed() && !e.dead {
			n.Track(e.Key) // Redis forgot the key as it sent the invalidation
		}
	}
}

// dropLocked removes e's copy. The caller holds e.mu.
func (s *Copies[K, V]) dropLocked(e *Entry[K]) {
	s.Local.Delete(e.K)
	retire(e.held)
	e.held = nil
}

// retire makes a copy that leaves its entry (replaced or dropped) unverified
// and superseded, never served again, fresh or stale. A reader may hold
// it still, having looked it up before: invalidations revoke only the
// entry's copy, so a copy replaced while its reader was held up, verified
// but no longer vouched for, would be vouched for again once the session
// caught up, and served older than the write the session had just handled
// (the checker saw it on a loaded machine; RELIABILITY.md).
func retire(m *copyMeta) {
	if m != nil {
		m.state.Store(0)
		m.superseded.Store(true)
	}
}

// Demote marks e dead, demoted: nothing is stored for it any more, and
// its copy and registration are dropped (forgetLocked).
func (s *Copies[K, V]) Demote(e *Entry[K]) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	e.dead = true
	s.forgetLocked(e)
}

// Refreshable reports whether e holds a copy that refresh reloads.
func (e *Entry[K]) Refreshable() bool {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.registered
}

// unverifiedOn reports whether e holds a copy of n's that no session
// vouches for: one a session of n starting revalidates.
func (e *Entry[K]) unverifiedOn(n *track.Node) bool {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.registered && e.held != nil && e.held.n == n && !e.held.Verified()
}

// Refreshed clears e's count of failed reloads: one succeeded.
func (e *Entry[K]) Refreshed() {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	e.failures = 0
}

// forgetLocked drops e's copy, its refresh registration and failure count,
// and moves the generation on so no read in flight stores its value
// afterwards: e was demoted, or its reloads kept failing. The caller holds
// e.mu.
func (s *Copies[K, V]) forgetLocked(e *Entry[K]) {
	s.Gens.Of(e.Key).Add(1)
	s.dropLocked(e)
	e.registered = false
	e.failures = 0
}

// revoke makes e's copy unverified, without dropping it: the key's slot
// moved to another node, whose session has not vouched for it yet, or a
// reload of it failed.
func (s *Copies[K, V]) revoke(e *Entry[K]) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	s.revokeLocked(e)
}

func (s *Copies[K, V]) revokeLocked(e *Entry[K]) {
	if e.held != nil {
		e.held.state.Store(0)
	}
}

// DropIfUnchanged forgets e's copy, which a reload under t found deleted
// from Redis, unless a write came in since, whose copy is newer than
// what the reload saw.
func (s *Copies[K, V]) DropIfUnchanged(e *Entry[K], t Token) {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	if s.Gens.Of(e.Key).Load() == t.gen {
		s.forgetLocked(e)
	}
}

// RefreshFailed counts a failed reload of e: its copy is unverified from
// now on, since nothing confirmed it (with invalidation off, the reload is
// all that vouches for it), and after RefreshFailures in a row it is
// dropped. It reports whether it dropped the copy.
func (s *Copies[K, V]) RefreshFailed(e *Entry[K]) (dropped bool) {
	s.Count.RefreshErrors.Add(1)
	e.Mu.Lock()
	defer e.Mu.Unlock()
	e.failures++
	if e.failures >= s.Cfg.RefreshFailures {
		s.forgetLocked(e)
		return true
	}
	s.revokeLocked(e)
	return false
}

// The copies are a Cache's side of the transport (runtime/internal/track,
// whose Store they are): the hub of the Cache's client, shared by every
// repository on it, tells them which keys changed, when a session starts
// and when slots move, and they apply each through the protocol above.

// Changed marks the copies of keys, or of every key, unverified.
func (s *Copies[K, V]) Changed(keys []string, flush bool) {
	if flush {
		s.flushed()
	} else {
		s.Invalidate(keys)
	}
	if s.Cfg.OnInvalidate != nil {
		s.Cfg.OnInvalidate(keys)
	}
}

// Live reloads the copies of n that are unverified, when a session of n
// has just started: unchanged bytes make a copy verified again, changed
// bytes replace it, a missing key drops it. Until then reads of those
// keys ask Redis.
func (s *Copies[K, V]) Live(ctx context.Context, n *track.Node) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.Done, cancel)() // the Cache's Close does not wait on Redis
	var es []*Entry[K]
	for _, e := range s.Det.Set.Load().ByKey {
		if e.unverifiedOn(n) {
			es = append(es, e)
		}
	}
	s.Reload(ctx, es)
}

// Moved makes the copies of keys whose slot moved unverified until
// Settled reloads them from their new owner.
func (s *Copies[K, V]) Moved(moved func(key string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.Det.Set.Load().ByKey {
		if moved(e.Key) {
			s.revoke(e)
			if s.moved == nil {
				s.moved = map[*Entry[K]]struct{}{}
			}
			s.moved[e] = struct{}{}
		}
	}
}

// Settled reloads the copies Moved made unverified.
func (s *Copies[K, V]) Settled(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.Done, cancel)()
	s.mu.Lock()
	es := make([]*Entry[K], 0, len(s.moved))
	for e := range s.moved {
		es = append(es, e)
	}
	clear(s.moved)
	s.mu.Unlock()
	s.Reload(ctx, es)
}

// Hot returns the Redis keys of the hot set.
func (s *Copies[K, V]) Hot() []string {
	return slices.Collect(maps.Keys(s.Det.Set.Load().byName))
}
