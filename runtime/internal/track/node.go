package track

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// Node is one Redis server whose writes must reach the local copies: the
// server of a single client, one node of a cluster, or the whole keyspace
// for Pub/Sub and for invalidation off. It carries what the freshness
// protocol checks every copy against (the coverage of the session that
// listens to the node, and how far that session has vouched), and the
// breaker that makes reads fail fast while the node cannot be reached,
// which also knows whether the node answers.
type Node struct {
	Name string
	// state is odd while a session covering the node is live and even
	// while none is; each start and each end of a session adds one, so a
	// state seen once is never seen again after the session ends.
	state atomic.Uint64
	// vouched is the stamp (see Stamps) of the last PING the session sent
	// and saw answered: every invalidation Redis sent before it was
	// handled.
	vouched atomic.Int64
	// mu guards since, when state last moved (or the node was made), so
	// that Stats can say since when a node is uncovered. Only the session
	// and Stats take it; reads load state alone.
	mu    sync.Mutex
	since time.Time
	// wake starts the node's session unless one runs (Want); nil where
	// none ever covers the node (invalidate=off). idle is set while none
	// runs: no copy of the node's keys is kept, and the node is asked
	// nothing but the caller's own commands.
	wake atomic.Pointer[func()]
	idle atomic.Bool
	// keyed is set while the node's sessions track the keys they are
	// asked for (Track), not every key of a prefix: a copy is then
	// verified only once its key is tracked. tracker is the live keyed
	// session's, nil while none is.
	keyed   atomic.Bool
	tracker atomic.Pointer[func(keys []string)]
	// On a cluster (applyTopology): replicas are the nodes that replicate
	// n, which track n's keys too, and master the node n replicates, nil
	// for a master.
	replicas atomic.Pointer[[]*Node]
	master   atomic.Pointer[Node]
	// holding is set while a copy of a key n owns may be kept: only then
	// does n's session PING to vouch for it. A cluster's replicas, and its
	// masters none of whose keys this process holds, keep a session (to
	// track, or to be ready for a slot) that costs them no PING.
	holding atomic.Bool
	*breaker.Breaker
}

// NewNode returns the node called name, uncovered since now, whose
// breaker asks it on line until ctx ends.
func NewNode(ctx context.Context, name string, now time.Time, line breaker.Line, brk *breaker.Config) *Node {
	return &Node{Name: name, since: now, Breaker: breaker.New(ctx, name, line, brk)}
}

// State returns the node's coverage state: odd while a session is live.
func (n *Node) State() uint64 { return n.state.Load() }

// Vouched returns the stamp (see Stamps) up to which the node's session
// has handled every invalidation Redis sent.
func (n *Node) Vouched() int64 { return n.vouched.Load() }

// Started and Ended bracket a live session, at now; a session starts
// vouched up to stamp, now's: the subscription was confirmed on the
// connection.
func (n *Node) Started(now time.Time, stamp int64) {
	n.vouched.Store(stamp)
	n.move(now)
}

// Ended ends the coverage of the node's session, at now.
func (n *Node) Ended(now time.Time) { n.move(now) }

// CoveredForever marks n covered by no session, for invalidate=off,
// where refresh alone vouches for a copy.
func (n *Node) CoveredForever(now time.Time) {
	n.vouched.Store(math.MaxInt64)
	n.move(now)
}

func (n *Node) move(now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.since = now
	n.state.Add(1)
}

// UncoveredSince returns when n's last session ended, or when its first
// was wanted if none has started yet; the zero time while a session is
// live, and while none is wanted (idle).
func (n *Node) UncoveredSince() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state.Load()&1 == 1 || n.idle.Load() {
		return time.Time{}
	}
	return n.since
}

// Want says a copy of a key on n is about to be kept: n's session starts
// unless one runs, and the copy is served once it vouches (the store's
// Live). A node none of whose keys has a copy has no session: it costs
// Redis no PING and no invalidation.
func (n *Node) Want() {
	if f := n.wake.Load(); f != nil {
		(*f)()
	}
}

// OnWant has Want call wake, which starts n's session: set by whoever
// starts n's sessions (the hub, a listener).
func (n *Node) OnWant(wake func()) { n.wake.Store(&wake) }

// Holding says a copy of a key n owns is about to be kept: n's session
// vouches for it from now, until it finds no copy of n's kept (see
// lingering).
func (n *Node) Holding() {
	if !n.holding.Load() {
		n.holding.Store(true)
	}
}

// TrackedBy makes n keyed, its Track calling track: what the start of a
// keyed session does (the hub sets keyed, the session its tracker), for
// a caller with no session: the freshness protocol's own tests.
func (n *Node) TrackedBy(track func(keys []string)) {
	n.keyed.Store(true)
	n.tracker.Store(&track)
}

// Keyed reports whether n's sessions track only the keys asked for
// (Track): a copy of a key is verified only once the key's tracking is
// confirmed (Store.Tracked) under the state the copy's command was sent
// in, and not invalidated since.
func (n *Node) Keyed() bool { return n.keyed.Load() }

// Track asks n's live keyed session to track keys, whose copies are about
// to be kept: the confirmation comes as Store.Tracked. Without a live
// session it does nothing: a session tracks the kept copies' keys as it
// starts. It does not wait.
//
// On a cluster n's replicas are asked too, first: the one promoted in
// n's place then hears the keys' writes from its first. Their EXISTS is
// written before n's, which must be answered before a copy is verified;
// a promotion takes the cluster several round trips between nodes, which
// start after the replica has read what was written to it before.
func (n *Node) Track(keys ...string) {
	if rs := n.replicas.Load(); rs != nil {
		for _, r := range *rs {
			r.trackHere(keys)
		}
	}
	n.trackHere(keys)
}

// trackHere asks n's own live keyed session to track keys.
func (n *Node) trackHere(keys []string) {
	if f := n.tracker.Load(); f != nil {
		(*f)(keys)
	}
}

// wanted marks n's session wanted from now, or idle again.
func (n *Node) wanted(now time.Time, yes bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if yes && n.idle.Load() {
		n.since = now
	}
	n.idle.Store(!yes)
}

// vouch records an answered PING stamped stamp, heard at now, late when
// AnswerWithin or more after it was sent.
func (n *Node) vouch(stamp int64, now time.Time, late bool) {
	n.vouched.Store(stamp)
	n.Answered(now, late)
}
