package fresh

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/detect"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// The rules of the freshness protocol (the package comment and Copies'
// methods), one test each, without a server. Durations are the promise's
// own figures, written out: a row reads "49 ms after the vouch", not
// "vouchFor less a millisecond", so that loosening a bound in the code
// fails a row.

// The vouch: a copy is served without asking Redis only within 50 ms of
// the stamp its node's session last vouched up to, strictly, whenever
// the copy itself was kept.
func TestACopyIsServedOnlyWithinItsVouch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		off       bool          // invalidation off: no session, refresh alone vouches (CoveredForever)
		keptAfter time.Duration // from the vouch to the read that kept the copy
		readAfter time.Duration // from the vouch to the read that looks at it
		want      bool
	}{
		{name: "at the vouch: served", want: true},
		{name: "49 ms after the vouch: served", readAfter: 49 * time.Millisecond, want: true},
		{name: "50 ms after the vouch: not served, the bound is strict", readAfter: 50 * time.Millisecond},
		{name: "51 ms after the vouch: not served", readAfter: 51 * time.Millisecond},
		{name: "a second after the vouch: not served", readAfter: time.Second},
		{name: "kept 40 ms after the vouch, read 11 ms later: 51 ms after the vouch, not served",
			keptAfter: 40 * time.Millisecond, readAfter: 51 * time.Millisecond},
		{name: "kept 40 ms after the vouch, read 9 ms later: served",
			keptAfter: 40 * time.Millisecond, readAfter: 49 * time.Millisecond, want: true},
		{name: "invalidation off: refresh alone vouches, served an hour later", off: true, readAfter: time.Hour, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			if tc.off {
				e.n.CoveredForever(e.clock.Now())
			} else {
				e.start(e.n)
			}
			e.hot("k")
			e.after(tc.keptAfter)
			if !e.keep("k", "v1") {
				t.Fatal("Keep refused a read nothing overtook")
			}
			e.after(tc.readAfter - tc.keptAfter)
			if got := e.fresh("k"); got != tc.want {
				t.Errorf("Fresh = %v, want %v", got, tc.want)
			}
			// Servable says the same, and never as a stale read: the copy
			// is verified, and stale reads are off.
			if ok, stale := e.servable("k"); ok != tc.want || stale {
				t.Errorf("Servable = %v, %v, want %v, false", ok, stale, tc.want)
			}
		})
	}
}

// A read's result is shared with a caller whose token saw the same
// world (the key's generation, its node and the node's state), and
// began less than 50 ms after it.
func TestAReadIsSharedOnlyInTheSameWorldWithinTheVouch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		between func(e *env) // between the two tokens
		later   time.Duration
		want    bool
	}{
		{name: "begun together: shared", want: true},
		{name: "49 ms later, nothing handled between: shared", later: 49 * time.Millisecond, want: true},
		{name: "50 ms later: not shared, the bound is strict", later: 50 * time.Millisecond},
		{name: "51 ms later: not shared", later: 51 * time.Millisecond},
		{name: "an invalidation of the key between: not shared",
			between: func(e *env) { e.c.Invalidate([]string{"k"}) }},
		{name: "the session ended between: not shared",
			between: func(e *env) { e.end(e.n) }},
		{name: "the key's slot moved to another live node between: not shared",
			between: func(e *env) { n2 := e.node("n2"); e.start(n2); e.move(n2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			e.start(e.n)
			a := e.c.Begin("k")
			e.after(tc.later)
			if tc.between != nil {
				tc.between(e)
			}
			b := e.c.Begin("k")
			if got := a.Shares(b); got != tc.want {
				t.Errorf("Shares = %v, want %v", got, tc.want)
			}
		})
	}
}

// Keep stores a read's value only if nothing invalidated, wrote, deleted
// or demoted the key since the read's token; a session that started or
// ended meanwhile leaves the copy kept but unverified. Before each read,
// the key holds v0, verified.
func TestACopyIsKeptOnlyIfNothingTouchedItsKeySinceTheRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		between   func(e *env) // between the read's token and its Keep
		exp       int64        // the read's expiry of the key; 0: no TTL
		wantKept  bool
		wantHeld  string // "" when the store holds nothing
		wantFresh bool
	}{
		{name: "nothing between: kept and served", wantKept: true, wantHeld: "v1", wantFresh: true},
		{name: "an invalidation of the key: refused, the old copy stays unverified",
			between: func(e *env) { e.c.Invalidate([]string{"k"}) }, wantHeld: "v0"},
		{name: "FLUSHALL: refused, the old copy stays unverified",
			between: func(e *env) { e.c.Changed(nil, true) }, wantHeld: "v0"},
		{name: "an own write of the key: refused, the write's value stays",
			between:  func(e *env) { w := "w"; e.c.Wrote("k", "k", e.c.Begin("k"), &w, 1, 0) },
			wantHeld: "w", wantFresh: true},
		{name: "a write that may have landed: refused, the old copy stays unverified",
			between: func(e *env) { e.c.Uncertain("k", "k") }, wantHeld: "v0"},
		{name: "the key demoted: refused, nothing held",
			between: func(e *env) { e.demote("k") }},
		{name: "its tracking confirmed: refused, the read may predate it",
			between: func(e *env) { e.c.Tracked(e.n, []string{"k"}) }, wantHeld: "v0", wantFresh: true},
		{name: "the session ended: kept, unverified",
			between: func(e *env) { e.end(e.n) }, wantKept: true, wantHeld: "v1"},
		{name: "the session ended and another started: kept, unverified",
			between: func(e *env) { e.end(e.n); e.start(e.n) }, wantKept: true, wantHeld: "v1"},
		{name: "the read did not ask for the TTL: refused, a copy must not outlive its key",
			exp: layout.Unasked, wantHeld: "v0", wantFresh: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v0")
			tok := e.c.Begin("k")
			if tc.between != nil {
				tc.between(e)
			}
			v := "v1"
			if got := e.c.Keep(en, tok, &v, 0, len(v), tc.exp); got != tc.wantKept {
				t.Errorf("Keep = %v, want %v", got, tc.wantKept)
			}
			e.holds(t, "k", tc.wantHeld, tc.wantFresh)
		})
	}
}

// No session covered the read as it was sent: its copy is kept, but
// served only once a session vouches for it (refresh, on Live), even if
// one started before the copy was kept.
func TestACopyReadWithoutASessionIsKeptUnverified(t *testing.T) {
	for _, tc := range []struct {
		name          string
		startsBetween bool
	}{
		{name: "no session at all: kept, unverified"},
		{name: "a session started after the read was sent: kept, unverified", startsBetween: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			en := e.hot("k")
			tok := e.c.Begin("k")
			if tc.startsBetween {
				e.start(e.n)
			}
			v := "v1"
			if !e.c.Keep(en, tok, &v, 0, 2, 0) {
				t.Fatal("Keep refused")
			}
			if got, _ := e.held("k"); got != "v1" {
				t.Errorf("the store holds %q, want v1", got)
			}
			if e.fresh("k") {
				t.Error("Fresh: a copy no session covered is served")
			}
			if !en.unverifiedOn(e.n) {
				t.Error("the copy is not among those a session's start revalidates")
			}
		})
	}
}

// A row known to be absent is kept only with null_ttl; without it, the
// read that found the row absent drops the copy it replaces.
func TestAnAbsentRowIsKeptOnlyWithNullTTL(t *testing.T) {
	for _, tc := range []struct {
		name      string
		nullTTL   time.Duration
		wantHeld  string
		wantFresh bool
	}{
		{name: "null_ttl off: the old copy dropped, nothing held"},
		{name: "null_ttl on: the absence held, and served", nullTTL: time.Minute, wantHeld: "<nil>", wantFresh: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{NullTTL: tc.nullTTL})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v0")
			if kept := e.c.Keep(en, e.c.Begin("k"), nil, 0, 0, 0); kept != (tc.wantHeld != "") {
				t.Errorf("Keep reported %v, want %v: it reports whether it stored", kept, tc.wantHeld != "")
			}
			e.holds(t, "k", tc.wantHeld, tc.wantFresh)
		})
	}
}

// A copy replaced or dropped is retired: a reader that looked it up
// before holds it still, and it is never served to it again, fresh or
// stale, even once a session vouches anew.
func TestAReplacedCopyIsNeverServedAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave func(e *env)
	}{
		{name: "replaced by a newer read", leave: func(e *env) { e.keep("k", "v2") }},
		{name: "dropped by a delete", leave: func(e *env) { e.c.Wrote("k", "k", e.c.Begin("k"), nil, 0, 0) }},
		{name: "dropped by a demotion", leave: func(e *env) { e.demote("k") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{StaleReads: true})
			e.start(e.n)
			e.hot("k")
			e.keep("k", "v1")
			old := e.copyOf("k")
			tc.leave(e)
			// Within the vouch, under the same session: but for its
			// retirement, the old copy would be fresh still.
			if e.c.Fresh(&old.Meta) {
				t.Error("Fresh: the old copy is served")
			}
			e.after(time.Second) // the node silent and down: what a stale read needs
			e.open(e.n)
			if ok, _ := e.c.Servable(ended(), "k", &old.Meta); ok {
				t.Error("Servable: the old copy is served as a stale read")
			}
		})
	}
}

// Wrote: the process's own acknowledged write becomes the copy, verified
// when nothing touched the key since the write's token, unverified (but
// held: it is newer than the copy it replaces) otherwise; a delete drops
// the copy. Either way no read begun before the write keeps its result.
func TestAnOwnWriteBecomesTheCopy(t *testing.T) {
	w := "w"
	for _, tc := range []struct {
		name      string
		notHot    bool
		nullTTL   time.Duration
		between   func(e *env) // between the write's token and its acknowledgement
		v         *string      // nil: a delete
		wantHeld  string
		wantFresh bool
	}{
		{name: "nothing between: the written value, served", v: &w, wantHeld: "w", wantFresh: true},
		{name: "another write heard between: the written value, unverified",
			between: func(e *env) { e.c.Invalidate([]string{"k"}) }, v: &w, wantHeld: "w"},
		{name: "the session ended between: the written value, unverified",
			between: func(e *env) { e.end(e.n) }, v: &w, wantHeld: "w"},
		{name: "a delete: the copy dropped"},
		{name: "a delete with null_ttl on: the copy dropped, no absence kept", nullTTL: time.Minute},
		{name: "the entry demoted while the write was out: nothing held",
			between: func(e *env) { e.c.Demote(e.entry("k")) }, v: &w},
		{name: "the key not hot: nothing held", notHot: true, v: &w},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{NullTTL: tc.nullTTL})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v0")
			if tc.notHot {
				e.demote("k")
			}
			read := e.c.Begin("k") // a read begun before the write
			tok := e.c.Begin("k")
			if tc.between != nil {
				tc.between(e)
			}
			e.c.Wrote("k", "k", tok, tc.v, 1, 0)
			e.holds(t, "k", tc.wantHeld, tc.wantFresh)
			if tc.notHot {
				en = e.hot("k") // promoted again before the old read returns
			}
			old := "old"
			if e.c.Keep(en, read, &old, 0, 3, 0) {
				t.Error("a read begun before the write kept its result")
			}
		})
	}
}

// The written value is the copy's own: the caller's value may change
// after the write without changing the copy.
func TestAnOwnWriteIsKeptAsAClone(t *testing.T) {
	e := newCopies(t, Params{})
	e.start(e.n)
	e.hot("k")
	w := "w"
	e.c.Wrote("k", "k", e.c.Begin("k"), &w, 1, 0)
	w = "changed"
	if got, _ := e.held("k"); got != "w" {
		t.Errorf("the store holds %q, want w", got)
	}
}

// Applied: a collection write changes the copy (apply); the result is
// verified when the copy was and nothing touched the key since the
// write's token, unverified otherwise, and still served while Redis
// cannot be reached. Without a copy to change, or without apply, the
// copy is older than Redis: unverified, and never a stale read.
func TestACollectionWriteChangesTheCopy(t *testing.T) {
	add := func(v *string) *string { s := *v + "+x"; return &s }
	for _, tc := range []struct {
		name       string
		before     func(e *env) // before the write's token
		between    func(e *env) // between the token and the acknowledgement
		apply      func(*string) *string
		wantHeld   string
		wantFresh  bool
		wantStale  bool // served as a stale read once the node is silent and down
		wantPassed uint64
	}{
		{name: "a verified copy, nothing between: the change applied, served",
			apply: add, wantHeld: "v1+x", wantFresh: true, wantStale: true, wantPassed: 1},
		{name: "another write heard between: the change applied, unverified, a stale read",
			between: func(e *env) { e.c.Invalidate([]string{"k"}) },
			apply:   add, wantHeld: "v1+x", wantStale: true, wantPassed: 1},
		{name: "the copy unverified before the write: the change applied, unverified, a stale read",
			before: func(e *env) { e.end(e.n); e.start(e.n) },
			apply:  add, wantHeld: "v1+x", wantStale: true, wantPassed: 1},
		{name: "no apply: the copy unverified and superseded, never a stale read",
			wantHeld: "v1", wantPassed: 1},
		// Built from a copy older than Redis (a write by another heard
		// while the node was believed down), the new copy is older too:
		// Redis holds that write and this one, the copy only this one.
		{name: "the copy superseded before the write: the change applied, still superseded, never a stale read",
			before: func(e *env) { e.open(e.n); e.c.Invalidate([]string{"k"}); e.answered(e.n) },
			apply:  add, wantHeld: "v1+x", wantPassed: 1},
		{name: "no copy held: nothing held",
			before: func(e *env) { e.c.Local.Delete("k") }, apply: add},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{StaleReads: true})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v1")
			if tc.before != nil {
				tc.before(e)
			}
			read := e.c.Begin("k") // a read begun before the write
			tok := e.c.Begin("k")
			if tc.between != nil {
				tc.between(e)
			}
			e.answered(e.n)
			e.c.Applied("k", "k", tok, tc.apply)
			if got := e.c.PassedOver.Load(); got != tc.wantPassed {
				t.Errorf("PassedOver = %d, want %d (theine counted a hit no read was served)", got, tc.wantPassed)
			}
			e.holds(t, "k", tc.wantHeld, tc.wantFresh)
			old := "old"
			if e.c.Keep(en, read, &old, 0, 3, 0) {
				t.Error("a read begun before the write kept its result")
			}
			e.after(time.Second)
			e.open(e.n)
			if ok, stale := e.servable("k"); ok != tc.wantStale || stale != tc.wantStale {
				t.Errorf("with the node silent and down, Servable = %v, %v, want %v, %v", ok, stale, tc.wantStale, tc.wantStale)
			}
		})
	}
}

// Applied to a copy the local store no longer holds (evicted, expired in
// theine), or that is no longer the entry's: the entry's copy is older
// than what Redis holds, and never served as a stale read again.
func TestACollectionWriteWithoutItsCopySupersedesTheEntrysCopy(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(e *env)
	}{
		{name: "the store evicted the copy", lose: func(e *env) { e.c.Local.Delete("k") }},
		{name: "the store holds a copy that is not the entry's", lose: func(e *env) {
			v := "other"
			e.c.Local.SetWithTTL("k", &Copy[string]{Val: &v}, 1, time.Hour)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{StaleReads: true})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v1")
			meta := en.held
			tc.lose(e)
			e.c.Applied("k", "k", e.c.Begin("k"), func(v *string) *string { return v })
			if meta.Verified() || !meta.superseded.Load() {
				t.Errorf("the entry's copy: verified %v, superseded %v, want false, true", meta.Verified(), meta.superseded.Load())
			}
		})
	}
}

// Uncertain: a write that failed after it may have reached Redis leaves
// the copy unverified but held, and not overtaken (no write was heard):
// it is still a stale read; no read begun before keeps its result.
func TestAnUncertainWriteUnverifiesTheCopy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		notHot   bool
		wantHeld string
	}{
		{name: "a hot key: the copy held, unverified, a stale read", wantHeld: "v1"},
		{name: "a key not hot: nothing held", notHot: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{StaleReads: true})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v1")
			if tc.notHot {
				e.demote("k")
			}
			read := e.c.Begin("k")
			e.answered(e.n)
			e.c.Uncertain("k", "k")
			if got, _ := e.held("k"); got != tc.wantHeld {
				t.Errorf("the store holds %q, want %q", got, tc.wantHeld)
			}
			if e.fresh("k") {
				t.Error("Fresh: the copy a write may have overtaken is served")
			}
			if tc.notHot {
				en = e.hot("k")
			}
			old := "old"
			if e.c.Keep(en, read, &old, 0, 3, 0) {
				t.Error("a read begun before the write kept its result")
			}
			if tc.notHot {
				return
			}
			e.answered(e.n) // the node answered since: a heard write would now overtake the copy
			e.after(time.Second)
			e.open(e.n)
			if ok, stale := e.servable("k"); !ok || !stale {
				t.Errorf("with the node silent and down, Servable = %v, %v, want a stale read", ok, stale)
			}
		})
	}
}

// Servable: an unverified copy is served, as a stale read, only with
// stale reads on, while its key lives, no write of it overtook it, and
// the node that owns the key now is silent and its breaker open. Each
// row starts from a verified copy kept under a live session, the node
// having answered promptly just before.
func TestAnUnverifiedCopyIsServedOnlyWhileItsNodeIsSilentAndDown(t *testing.T) {
	silentFor := 30 * time.Millisecond // breaker.SilentAfter: no answer for this long is silence
	for _, tc := range []struct {
		name      string
		noStale   bool // stale reads off
		then      func(e *env)
		wantOK    bool
		wantStale bool
	}{
		{name: "verified and vouched for: served, not stale",
			then: func(e *env) {}, wantOK: true},
		{name: "unverified, the node silent and down: a stale read",
			then: func(e *env) { e.c.Uncertain("k", "k"); e.after(silentFor); e.open(e.n) }, wantOK: true, wantStale: true},
		{name: "unverified, the node silent and down, stale reads off: not served", noStale: true,
			then: func(e *env) { e.c.Uncertain("k", "k"); e.after(silentFor); e.open(e.n) }},
		{name: "unverified, the breaker open but the node answered 10 ms ago: slow, not silent, not served",
			then: func(e *env) {
				e.c.Uncertain("k", "k")
				e.after(silentFor)
				e.answered(e.n)
				e.open(e.n)
				e.after(10 * time.Millisecond)
				e.open(e.n)
			}},
		{name: "unverified, the node silent but its breaker closed: not served",
			then: func(e *env) { e.c.Uncertain("k", "k"); e.after(time.Second) }},
		{name: "unverified, silent and down, its key expired: not served",
			then: func(e *env) {
				e.c.Keep(e.entry("k"), e.c.Begin("k"), ptr("v2"), 0, 2, e.clock.Now().Add(20*time.Millisecond).UnixNano())
				e.c.Uncertain("k", "k")
				e.after(silentFor)
				e.open(e.n)
			}},
		{name: "a write heard, no answer since: a stale read (an outage right after a write)",
			then: func(e *env) { e.c.Invalidate([]string{"k"}); e.after(silentFor); e.open(e.n) }, wantOK: true, wantStale: true},
		{name: "a write heard, an answer since, then silent and down: overtaken, not served",
			then: func(e *env) {
				e.c.Invalidate([]string{"k"})
				e.answered(e.n)
				e.after(silentFor)
				e.open(e.n)
			}},
		{name: "a write heard, an answer since, then silent for 400 ms: a stale read again",
			then: func(e *env) {
				e.c.Invalidate([]string{"k"})
				e.answered(e.n)
				e.after(400 * time.Millisecond)
				e.open(e.n)
			}, wantOK: true, wantStale: true},
		{name: "a write heard while the breaker was open: superseded, never served",
			then: func(e *env) { e.after(silentFor); e.open(e.n); e.c.Invalidate([]string{"k"}) }},
		{name: "unverified, its old node silent and down, its slot now on a node that answers: not served",
			then: func(e *env) {
				n2 := e.node("n2")
				e.start(n2)
				e.c.Uncertain("k", "k")
				e.after(silentFor)
				e.open(e.n)
				e.answered(n2)
				e.move(n2)
			}},
		{name: "unverified, its old node answering, its slot now on a node silent and down: a stale read",
			then: func(e *env) {
				n2 := e.node("n2")
				e.start(n2)
				e.c.Uncertain("k", "k")
				e.after(silentFor)
				e.open(n2)
				e.answered(e.n)
				e.move(n2)
			}, wantOK: true, wantStale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{StaleReads: !tc.noStale})
			e.start(e.n)
			e.hot("k")
			e.keep("k", "v1")
			e.answered(e.n)
			tc.then(e)
			if ok, stale := e.servable("k"); ok != tc.wantOK || stale != tc.wantStale {
				t.Errorf("Servable = %v, %v, want %v, %v", ok, stale, tc.wantOK, tc.wantStale)
			}
		})
	}
}

// Overtaken: a write of the key heard, and the node answered after it
// while it still answers (within 400 ms, however late), or a write heard
// while the node was believed down (superseded).
func TestACopyIsOvertakenByAWriteTheNodeAnsweredAfter(t *testing.T) {
	for _, tc := range []struct {
		name string
		then func(e *env)
		want bool
	}{
		{name: "no write heard: not overtaken", then: func(e *env) { e.answered(e.n) }},
		{name: "a write heard, no answer since: not overtaken",
			then: func(e *env) { e.answered(e.n); e.c.Invalidate([]string{"k"}) }},
		{name: "a write heard, an answer since, 399 ms ago: overtaken", want: true,
			then: func(e *env) { e.c.Invalidate([]string{"k"}); e.answered(e.n); e.after(399 * time.Millisecond) }},
		{name: "a write heard, an answer since, 400 ms ago: the node is silent, not overtaken",
			then: func(e *env) { e.c.Invalidate([]string{"k"}); e.answered(e.n); e.after(400 * time.Millisecond) }},
		{name: "a write heard, two answers since: overtaken", want: true,
			then: func(e *env) { e.c.Invalidate([]string{"k"}); e.answered(e.n); e.answered(e.n) }},
		{name: "a write heard while the breaker was open: superseded, overtaken a day later", want: true,
			then: func(e *env) { e.open(e.n); e.c.Invalidate([]string{"k"}); e.after(24 * time.Hour) }},
		{name: "a write that may have landed, an answer since: not overtaken (no write heard)",
			then: func(e *env) { e.c.Uncertain("k", "k"); e.answered(e.n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			e.start(e.n)
			e.hot("k")
			e.keep("k", "v1")
			tc.then(e)
			if got := e.copyOf("k").Meta.Overtaken(e.n, e.clock.Now()); got != tc.want {
				t.Errorf("Overtaken = %v, want %v", got, tc.want)
			}
		})
	}
}

// verifiedState: a copy is verified only under the session its read was
// sent under, on the node that owns the key when it is kept (the slot
// half: a slot moving inside one read leaves the copy unverified), and
// on a keyed node only once its key's tracking was confirmed under that
// session and not invalidated since; an unconfirmed key's tracking is
// asked for.
func TestACopyIsVerifiedOnlyUnderTheSessionAndNodeItsReadWasSentTo(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keyed     bool
		before    func(e *env) // before the read's token
		between   func(e *env) // between the token and Keep
		wantFresh bool
		wantAsked []string // the keys the node was asked to track
	}{
		{name: "a session live, tracking every key: verified", wantFresh: true},
		{name: "the key's slot moved to another live node inside the read: unverified",
			between: func(e *env) { n2 := e.node("n2"); e.start(n2); e.move(n2) }},
		{name: "the key's slot moved to a node with no session inside the read: unverified",
			between: func(e *env) { e.move(e.node("n2")) }},
		{name: "keyed, the key not tracked: unverified, its tracking asked for",
			keyed: true, wantAsked: []string{"k"}},
		{name: "keyed, the key tracked under this session: verified",
			keyed: true, before: func(e *env) { e.c.Tracked(e.n, []string{"k"}) }, wantFresh: true},
		{name: "keyed, the key tracked under an earlier session: unverified, asked again",
			keyed: true, before: func(e *env) { e.c.Tracked(e.n, []string{"k"}); e.end(e.n); e.start(e.n) },
			wantAsked: []string{"k"}},
		{name: "keyed, the key tracked, then invalidated: unverified, asked again",
			keyed: true, before: func(e *env) { e.c.Tracked(e.n, []string{"k"}); e.c.Invalidate([]string{"k"}) },
			wantAsked: []string{"k"}},
		{name: "keyed, the key tracked by the node its slot left: unverified",
			keyed: true, before: func(e *env) {
				n2 := e.node("n2")
				keyed(e.t, n2)
				e.start(n2)
				e.move(n2)
				e.c.Tracked(n2, []string{"k"})
				e.move(e.n) // back from n2, whose confirmation is no longer the owner's
			}, wantAsked: []string{"k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			var a *asked
			if tc.keyed {
				a = keyed(t, e.n)
			}
			e.start(e.n)
			en := e.hot("k")
			if tc.before != nil {
				tc.before(e)
			}
			tok := e.c.Begin("k")
			if tc.between != nil {
				tc.between(e)
			}
			v := "v1"
			if !e.c.Keep(en, tok, &v, 0, 2, 0) {
				t.Fatal("Keep refused")
			}
			if got := e.fresh("k"); got != tc.wantFresh {
				t.Errorf("Fresh = %v, want %v", got, tc.wantFresh)
			}
			if a != nil {
				if got := a.got(); !slices.Equal(got, tc.wantAsked) {
					t.Errorf("asked to track %q, want %q", got, tc.wantAsked)
				}
			}
		})
	}
}

// Tracked: a keyed session's confirmation is recorded on the hot key's
// entry (Confirmed), under the node's state, and moves the key's
// generation on, hot or not, so that no read sent before it keeps.
func TestATrackingConfirmationIsRecordedAndMovesTheGeneration(t *testing.T) {
	e := newCopies(t, Params{})
	keyed(t, e.n)
	e.start(e.n)
	en := e.hot("hot")
	hotGen, coldGen := e.gen("hot"), e.gen("cold")
	e.c.Tracked(e.n, []string{"cold", "hot"}) // a key not hot first: the keys after it count too
	if e.gen("hot") != hotGen+1 || e.gen("cold") != coldGen+1 {
		t.Errorf("generations moved from %d, %d to %d, %d, want one step each", hotGen, coldGen, e.gen("hot"), e.gen("cold"))
	}
	en.Mu.Lock()
	state, gen := en.Confirmed()
	en.Mu.Unlock()
	if state != e.n.State() || gen != e.gen("hot") {
		t.Errorf("Confirmed = %d, %d, want %d, %d", state, gen, e.n.State(), e.gen("hot"))
	}
}

// live: a copy is never served, fresh or stale, at or after the expiry
// Redis holds for its key.
func TestACopyIsNotServedAtOrAfterItsKeysExpiry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stale bool // the copy unverified, the node silent and down: a stale read is asked for
		ttl   time.Duration
		after time.Duration
		want  bool
	}{
		{name: "no TTL: served", after: 49 * time.Millisecond, want: true},
		{name: "1 ms before its expiry: served", ttl: 30 * time.Millisecond, after: 29 * time.Millisecond, want: true},
		{name: "at its expiry: not served", ttl: 30 * time.Millisecond, after: 30 * time.Millisecond},
		{name: "after its expiry: not served", ttl: 30 * time.Millisecond, after: 31 * time.Millisecond},
		{name: "a stale read, no TTL: served", stale: true, after: time.Hour, want: true},
		{name: "a stale read, 1 ms before its expiry: served", stale: true, ttl: time.Second, after: 999 * time.Millisecond, want: true},
		{name: "a stale read, at its expiry: not served", stale: true, ttl: time.Second, after: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{StaleReads: true})
			e.start(e.n)
			en := e.hot("k")
			var exp int64
			if tc.ttl > 0 {
				exp = e.clock.Now().Add(tc.ttl).UnixNano()
			}
			if !e.c.Keep(en, e.c.Begin("k"), ptr("v1"), 0, 2, exp) {
				t.Fatal("Keep refused")
			}
			if tc.stale {
				e.c.Uncertain("k", "k")
			}
			e.after(tc.after)
			if tc.stale {
				e.open(e.n)
			}
			if ok, stale := e.servable("k"); ok != tc.want || ok && stale != tc.stale {
				t.Errorf("Servable = %v, %v, want %v, %v", ok, stale, tc.want, tc.stale)
			}
			if got := e.fresh("k"); !tc.stale && got != tc.want {
				t.Errorf("Fresh = %v, want %v", got, tc.want)
			}
		})
	}
}

// Reverify: a reload that finds the copy's bytes, on the copy's node,
// with nothing touching the key since its token, makes the copy current
// again: verified, its new expiry, no longer superseded or overtaken,
// and its failed reloads forgotten. Anything else leaves it to Keep.
func TestAReloadOfTheSameBytesReverifiesTheCopy(t *testing.T) {
	const sum = 7
	for _, tc := range []struct {
		name    string
		noCopy  bool
		between func(e *env) // between the reload's token and Reverify
		sum     uint64
		want    bool
	}{
		{name: "the same bytes, nothing between: reverified", sum: sum, want: true},
		{name: "other bytes: not reverified", sum: sum + 1},
		{name: "no copy: not reverified", noCopy: true, sum: sum},
		{name: "an invalidation between: not reverified", sum: sum,
			between: func(e *env) { e.c.Invalidate([]string{"k"}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{StaleReads: true, RefreshFailures: 2})
			e.start(e.n)
			en := e.hot("k")
			if !tc.noCopy {
				e.c.Keep(en, e.c.Begin("k"), ptr("v1"), sum, 2, 0)
			}
			// The copy superseded (a write heard while the node was down),
			// overtaken by an answer since, and one reload failed.
			e.open(e.n)
			e.c.Invalidate([]string{"k"})
			e.c.RefreshFailed(en)
			e.n.Judge(nil, e.clock.Now())
			e.end(e.n)
			e.start(e.n)

			tok := e.c.Begin("k")
			if tc.between != nil {
				tc.between(e)
			}
			exp := e.clock.Now().Add(time.Minute).UnixNano()
			if got := e.c.Reverify(en, tok, tc.sum, exp); got != tc.want {
				t.Fatalf("Reverify = %v, want %v", got, tc.want)
			}
			if tc.noCopy {
				if _, held := e.held("k"); held {
					t.Error("a copy appeared")
				}
				return
			}
			if got := e.fresh("k"); got != tc.want {
				t.Errorf("Fresh = %v, want %v", got, tc.want)
			}
			m := &e.copyOf("k").Meta
			if got := m.Overtaken(e.n, e.clock.Now()); got == tc.want {
				t.Errorf("Overtaken = %v, want %v", got, !tc.want)
			}
			if got := m.expires.Load(); (got == exp) != tc.want {
				t.Errorf("the copy expires at %d, want the reload's %d: %v", got, exp, tc.want)
			}
			// One more failed reload: the copy is dropped at the second
			// failure in a row, unless the reverify cleared the first.
			if got := e.c.RefreshFailed(en); got == tc.want {
				t.Errorf("RefreshFailed dropped = %v, want %v", got, !tc.want)
			}
		})
	}
}

// A reload read on another node than the copy's (the slot moved) does
// not reverify the copy: its session never vouched for it.
func TestAReloadFromAnotherNodeDoesNotReverify(t *testing.T) {
	e := newCopies(t, Params{})
	e.start(e.n)
	en := e.hot("k")
	e.c.Keep(en, e.c.Begin("k"), ptr("v1"), 7, 2, 0)
	n2 := e.node("n2")
	e.start(n2)
	e.move(n2)
	if e.c.Reverify(en, e.c.Begin("k"), 7, 0) {
		t.Error("Reverify = true for a reload from another node")
	}
}

// RefreshFailed: a failed reload leaves the copy unverified, and after
// RefreshFailures failures in a row drops it; a reload that succeeds
// (Refreshed) starts the count again.
func TestACopyIsDroppedAfterRefreshFailuresInARow(t *testing.T) {
	for _, tc := range []struct {
		name        string
		steps       []string // "fail" or "ok"
		wantDropped bool
	}{
		{name: "one failure of two allowed: held, unverified", steps: []string{"fail"}},
		{name: "two failures in a row: dropped", steps: []string{"fail", "fail"}, wantDropped: true},
		{name: "a failure, a success, a failure: held", steps: []string{"fail", "ok", "fail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{RefreshFailures: 2})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v1")
			read := e.c.Begin("k")
			var dropped bool
			fails := 0
			for _, s := range tc.steps {
				if s == "ok" {
					en.Refreshed()
					continue
				}
				fails++
				dropped = e.c.RefreshFailed(en)
			}
			if dropped != tc.wantDropped {
				t.Errorf("dropped = %v, want %v", dropped, tc.wantDropped)
			}
			if got := e.c.Count.RefreshErrors.Load(); got != uint64(fails) {
				t.Errorf("RefreshErrors = %d, want %d", got, fails)
			}
			if _, held := e.held("k"); held == tc.wantDropped {
				t.Errorf("held = %v, want %v", held, !tc.wantDropped)
			}
			if e.fresh("k") {
				t.Error("Fresh: a copy whose reload failed is served")
			}
			if got := en.Refreshable(); got == tc.wantDropped {
				t.Errorf("Refreshable = %v, want %v", got, !tc.wantDropped)
			}
			// A read in flight as the copy was dropped keeps nothing.
			if got := e.c.Keep(en, read, ptr("old"), 0, 3, 0); got == tc.wantDropped {
				t.Errorf("a read begun before: Keep = %v, want %v", got, !tc.wantDropped)
			}
		})
	}
}

// DropIfUnchanged: a reload that found the key deleted drops the copy,
// unless a write came in since, whose copy is newer.
func TestADeletedKeysCopyIsDroppedUnlessWrittenSince(t *testing.T) {
	for _, tc := range []struct {
		name     string
		between  func(e *env)
		wantHeld string
	}{
		{name: "nothing since the reload began: dropped"},
		{name: "an own write since: the write's copy stays", wantHeld: "w",
			between: func(e *env) { e.c.Wrote("k", "k", e.c.Begin("k"), ptr("w"), 1, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			e.start(e.n)
			en := e.hot("k")
			e.keep("k", "v1")
			tok := e.c.Begin("k")
			if tc.between != nil {
				tc.between(e)
			}
			e.c.DropIfUnchanged(en, tok)
			if got, _ := e.held("k"); got != tc.wantHeld {
				t.Errorf("the store holds %q, want %q", got, tc.wantHeld)
			}
			if got := en.Refreshable(); got != (tc.wantHeld != "") {
				t.Errorf("Refreshable = %v, want %v", got, tc.wantHeld != "")
			}
		})
	}
}

// Demote: a demoted key's copy and registration go, and nothing is
// stored for its entry any more, whatever read returns.
func TestADemotedKeyKeepsNothing(t *testing.T) {
	e := newCopies(t, Params{})
	e.start(e.n)
	en := e.hot("k")
	e.keep("k", "v1")
	e.demote("k")
	if _, held := e.held("k"); held {
		t.Error("the demoted key's copy is held")
	}
	if en.Refreshable() {
		t.Error("the demoted key's entry is still refreshed")
	}
	if e.c.Keep(en, e.c.Begin("k"), ptr("v2"), 0, 2, 0) {
		t.Error("Keep stored for a demoted entry")
	}
	if got := e.c.Det.Demotions.Load(); got != 1 {
		t.Errorf("Demotions = %d, want 1", got)
	}
}

// Invalidate: a write heard makes the copy unverified but leaves it held
// (a stale read, should the node go), counts the invalidation, asks a
// keyed node to track the key again (Redis forgot it as it sent the
// invalidation), and moves the generation of keys not hot too.
func TestAnInvalidationUnverifiesTheCopy(t *testing.T) {
	for _, tc := range []struct {
		name          string
		keyed         bool
		notHot        bool
		dead          bool // the entry demoted, still in the hot set as the invalidation looks it up
		wantHeld      string
		wantCount     uint64
		wantAsked     []string
		wantSupersede bool
		down          bool // the breaker open as the write is heard
	}{
		{name: "a hot key: held, unverified, counted", wantHeld: "v1", wantCount: 1},
		{name: "a hot key, the node believed down: superseded", down: true, wantHeld: "v1", wantCount: 1, wantSupersede: true},
		{name: "a key not hot: nothing held, not counted", notHot: true},
		{name: "a keyed node: its tracking asked for again", keyed: true, wantHeld: "v1", wantCount: 1, wantAsked: []string{"k"}},
		{name: "a keyed node, the entry demoted: not asked", keyed: true, dead: true, wantCount: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			var a *asked
			if tc.keyed {
				a = keyed(t, e.n)
			}
			e.start(e.n)
			en := e.hot("k")
			if tc.keyed {
				e.c.Tracked(e.n, []string{"k"})
			}
			e.keep("k", "v1")
			meta := en.held
			switch {
			case tc.notHot:
				e.demote("k")
			case tc.dead:
				e.c.Demote(en)
			}
			if tc.down {
				e.open(e.n)
			}
			gen := e.gen("k")
			e.c.Invalidate([]string{"k"})
			if e.gen("k") != gen+1 {
				t.Errorf("the generation moved from %d to %d, want one step", gen, e.gen("k"))
			}
			if got, _ := e.held("k"); got != tc.wantHeld {
				t.Errorf("the store holds %q, want %q", got, tc.wantHeld)
			}
			if e.fresh("k") {
				t.Error("Fresh: an invalidated copy is served")
			}
			if got := e.c.Count.Invalidations.Load(); got != tc.wantCount {
				t.Errorf("Invalidations = %d, want %d", got, tc.wantCount)
			}
			if a != nil {
				if got := a.got(); !slices.Equal(got, tc.wantAsked) {
					t.Errorf("asked to track %q, want %q", got, tc.wantAsked)
				}
			}
			if tc.wantHeld != "" {
				if got := meta.superseded.Load(); got != tc.wantSupersede {
					t.Errorf("superseded = %v, want %v", got, tc.wantSupersede)
				}
				if got := meta.heard.Load(); got != e.n.Answers()+1 {
					t.Errorf("heard = %d, want the answers then, %d, plus one", got, e.n.Answers())
				}
			}
		})
	}
}

// Changed: the transport's news. A flush unverifies every copy and moves
// every key's generation on; keys unverify theirs; OnInvalidate sees
// each batch.
func TestTheTransportsChangesUnverifyTheCopies(t *testing.T) {
	keys := make([]string, 100) // enough that some share no stripe with another
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	for _, tc := range []struct {
		name      string
		keys      []string
		flush     bool
		wantStale []string // the hot keys whose copies are unverified after
		wantMoved []string // the keys whose generations moved
		wantCount uint64
	}{
		{name: "a write of one key", keys: []string{"h1"}, wantStale: []string{"h1"}, wantMoved: []string{"h1"}, wantCount: 1},
		{name: "a flush", flush: true, wantStale: []string{"h1", "h2"}, wantMoved: append([]string{"h1", "h2"}, keys...), wantCount: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			e.start(e.n)
			for _, k := range []string{"h1", "h2"} {
				e.hot(k)
				e.keep(k, "v")
			}
			gens := map[string]uint64{}
			for _, k := range append([]string{"h1", "h2"}, keys...) {
				gens[k] = e.gen(k)
			}
			e.c.Changed(tc.keys, tc.flush)
			for _, k := range []string{"h1", "h2"} {
				if got, want := e.fresh(k), !slices.Contains(tc.wantStale, k); got != want {
					t.Errorf("Fresh(%s) = %v, want %v", k, got, want)
				}
			}
			for k, g := range gens {
				moved, want := e.gen(k) > g, slices.Contains(tc.wantMoved, k)
				// A key that shares a stripe with one that moved moves too.
				shares := slices.ContainsFunc(tc.wantMoved, func(m string) bool { return e.c.Gens.Of(m) == e.c.Gens.Of(k) })
				if want && !moved || !want && moved && !shares {
					t.Errorf("the generation of %s moved: %v, want %v", k, moved, want)
				}
			}
			if got := e.c.Count.Invalidations.Load(); got != tc.wantCount {
				t.Errorf("Invalidations = %d, want %d", got, tc.wantCount)
			}
			if len(e.invalidated) != 1 || !slices.Equal(e.invalidated[0], tc.keys) {
				t.Errorf("OnInvalidate saw %q, want one batch %q", e.invalidated, tc.keys)
			}
		})
	}
}

// Generations: every key has one counter, the same at every call, of a
// stripe within the table.
func TestEveryKeyHasOneGeneration(t *testing.T) {
	g := &Generations{Seed: maphash.MakeSeed()}
	for i := range 1000 {
		key := fmt.Sprintf("k%d", i)
		if a, b := g.Of(key), g.Of(key); a != b {
			t.Fatalf("%s has two generations", key)
		}
	}
}

// Live: a session of n that starts reloads n's copies no session
// vouches for, and nothing else; the reload ends when the Cache closes.
func TestASessionsStartReloadsItsNodesUnverifiedCopies(t *testing.T) {
	e := newCopies(t, Params{})
	e.start(e.n)
	for _, k := range []string{"verified", "unverified", "dropped", "deleted"} {
		e.hot(k)
		e.keep(k, "v")
	}
	e.c.Uncertain("unverified", "unverified")
	e.c.Uncertain("dropped", "dropped")
	e.c.RefreshFailed(e.entry("dropped"))                            // RefreshFailures 0: dropped at once
	e.c.Wrote("deleted", "deleted", e.c.Begin("deleted"), nil, 0, 0) // no copy left, the entry still registered
	n2 := e.node("n2")
	e.move(n2)
	e.hot("elsewhere")
	e.keep("elsewhere", "v") // n2's, unverified: no session of n2
	e.move(e.n)

	e.c.Live(context.Background(), e.n)
	if got := e.reloaded(); len(got) != 1 || !slices.Equal(got[0], []string{"unverified"}) {
		t.Errorf("reloaded %q, want [[unverified]]", got)
	}
	e.c.Live(context.Background(), n2)
	if got := e.reloaded(); len(got) != 2 || !slices.Equal(got[1], []string{"elsewhere"}) {
		t.Errorf("reloaded %q, want n2's [elsewhere] second", got)
	}
}

// The reloads of Live and Settled stop when the Cache closes (Done).
func TestReloadsEndWhenTheCacheCloses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reload func(e *env)
	}{
		{name: "Live", reload: func(e *env) { e.c.Live(context.Background(), e.n) }},
		{name: "Settled", reload: func(e *env) { e.c.Settled(context.Background()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			done, closeCache := context.WithCancel(context.Background())
			e.c.Done = done
			ended := make(chan struct{})
			e.c.Reload = func(ctx context.Context, _ []*Entry[string]) {
				closeCache()
				<-ctx.Done() // never returns unless Close ends it
				close(ended)
			}
			tc.reload(e)
			<-ended
		})
	}
}

// Moved and Settled: the copies of keys whose slot moved are unverified
// at once, and reloaded, once each, when the caller's client follows.
func TestACopyWhoseSlotMovedIsUnverifiedUntilReloaded(t *testing.T) {
	e := newCopies(t, Params{})
	e.start(e.n)
	for _, k := range []string{"a", "b", "c"} {
		e.hot(k)
		e.keep(k, "v")
	}
	moved := func(key string) bool { return key != "c" }
	e.c.Moved(moved)
	e.c.Moved(moved) // the same keys, moved again before the client follows
	for k, want := range map[string]bool{"a": false, "b": false, "c": true} {
		if got := e.fresh(k); got != want {
			t.Errorf("Fresh(%s) = %v, want %v", k, got, want)
		}
	}
	if got := e.reloaded(); len(got) != 0 {
		t.Errorf("reloaded %q before Settled", got)
	}
	e.c.Settled(context.Background())
	e.c.Settled(context.Background())
	got := e.reloaded()
	if len(got) != 2 {
		t.Fatalf("reloaded %q, want two reloads", got)
	}
	slices.Sort(got[0])
	if !slices.Equal(got[0], []string{"a", "b"}) || len(got[1]) != 0 {
		t.Errorf("reloaded %q, want [a b] once, then nothing", got)
	}
}

// Hot names the Redis keys of the hot set, which the transport tracks.
func TestHotNamesTheHotKeys(t *testing.T) {
	e := newCopies(t, Params{})
	e.hot("a")
	e.hot("b")
	e.hot("c")
	e.demote("b")
	got := e.c.Hot()
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("Hot = %q, want [a c]", got)
	}
}

// A copy kept where no session covers its node starts one (Want), and
// makes the node's session vouch for its copies (Holding).
func TestKeepingACopyWakesItsNodesSession(t *testing.T) {
	for _, tc := range []struct {
		name     string
		session  bool
		wantWake int
	}{
		{name: "no session: one is wanted", wantWake: 1},
		{name: "a session live: none wanted", session: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			wakes := wakes(t, e.n)
			if tc.session {
				e.start(e.n)
			}
			e.hot("k")
			e.keep("k", "v")
			if *wakes != tc.wantWake {
				t.Errorf("the session was wanted %d times, want %d", *wakes, tc.wantWake)
			}
		})
	}
}

// The detector: a key read at the hot rate within one slot is promoted
// at once, by the read that made it hot; one that stops being read is
// demoted at the next selection; each change is counted and logged.
func TestAKeyReadAtTheHotRateIsPromotedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads int // in one slot of 100 ms, at hot_qps 100
		want  bool
	}{
		{name: "9 reads in a slot: 90 qps, not hot", reads: 9},
		{name: "10 reads in a slot: 100 qps, hot at the tenth", reads: 10, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			d := e.c.Det
			for i := range tc.reads - 1 {
				if d.Seen("k") != nil {
					t.Fatalf("hot after %d reads", i+1)
				}
			}
			en := d.Seen("k")
			if got := en != nil; got != tc.want {
				t.Fatalf("hot after %d reads: %v, want %v", tc.reads, got, tc.want)
			}
			msgs, attrs := e.logs.logged()
			if !tc.want {
				if len(msgs) != 0 || d.Promotions.Load() != 0 {
					t.Errorf("logged %q, %d promotions, for a key not hot", msgs, d.Promotions.Load())
				}
				return
			}
			if en.K != "k" || en.Key != "k" || !en.Since.Equal(e.clock.Now()) {
				t.Errorf("entry %q (%q) since %v, want k (k) since %v", en.K, en.Key, en.Since, e.clock.Now())
			}
			if got := d.Promotions.Load(); got != 1 {
				t.Errorf("Promotions = %d, want 1", got)
			}
			if len(msgs) != 1 || msgs[0] != "hotkey: promoted" || attrs[0]["key"] != "k" || attrs[0]["qps"] != 100.0 {
				t.Errorf("logged %q %v, want one promotion of k at 100 qps", msgs, attrs)
			}
			if _, ok := attrs[0]["cluster_qps"]; ok {
				t.Errorf("logged a cluster-wide rate without aggregation: %v", attrs[0])
			}
			// Read on, past twice the rate: it is hot already, and stays
			// promoted once.
			for range 15 {
				d.Observe("k")
			}
			if got := d.Promotions.Load(); got != 1 {
				t.Errorf("Promotions = %d after more reads, want 1", got)
			}
		})
	}
}

// A hot key no longer read is demoted at the next selection: its copy,
// its registration and nothing stored for it after; counted and logged
// with how long it was hot.
func TestAKeyNoLongerReadIsDemoted(t *testing.T) {
	e := newCopies(t, Params{})
	e.start(e.n)
	d := e.c.Det
	for range 10 {
		d.Observe("k")
	}
	en := d.Lookup("k")
	if en == nil {
		t.Fatal("not promoted")
	}
	e.keep("k", "v")
	d.Reselect(detect.PromotePass | detect.DemotePass) // read at the hot rate still: stays
	if d.Lookup("k") == nil {
		t.Fatal("demoted while read at the hot rate")
	}
	e.after(2 * time.Second) // a window and more without a read
	d.Rec.Advance(e.clock.Now())
	d.Reselect(detect.PromotePass | detect.DemotePass)
	if d.Lookup("k") != nil {
		t.Fatal("still hot")
	}
	if _, held := e.held("k"); held || en.Refreshable() {
		t.Errorf("the demoted key's copy held: %v, refreshed: %v", held, en.Refreshable())
	}
	if got := d.Demotions.Load(); got != 1 {
		t.Errorf("Demotions = %d, want 1", got)
	}
	msgs, attrs := e.logs.logged()
	if len(msgs) != 2 || msgs[1] != "hotkey: demoted" || attrs[1]["key"] != "k" || attrs[1]["hot_for"] != 2*time.Second {
		t.Errorf("logged %q %v, want a promotion, then the demotion of k, hot for 2s", msgs, attrs)
	}
}

// With aggregation, a key is promoted on its cluster-wide rate, put on
// the local scale (ClusterScale, hot_qps/cluster_hot_qps: 0.5 here, 100
// over 200 qps), though no read of it came here; the log says the
// cluster-wide rate as it was reported.
func TestAKeyHotClusterWideIsPromotedOnItsClusterRate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster float64 // the key's rate over every instance
		want    bool
	}{
		{name: "150 qps cluster-wide, under 200: not hot", cluster: 150},
		{name: "200 qps cluster-wide: hot", cluster: 200, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			d := e.c.Det
			if d.ClusterRates() != nil {
				t.Fatal("cluster rates before any reading")
			}
			d.Cluster.Store(&map[string]float64{"k": tc.cluster})
			d.Reselect(detect.PromotePass | detect.DemotePass)
			if got := d.Lookup("k") != nil; got != tc.want {
				t.Fatalf("hot: %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			_, attrs := e.logs.logged()
			if len(attrs) != 1 || attrs[0]["cluster_qps"] != tc.cluster || attrs[0]["qps"] != 0.0 {
				t.Errorf("logged %v, want cluster_qps %v and qps 0", attrs, tc.cluster)
			}
		})
	}
}

// ApplyLocked: a decision that changes nothing leaves the hot set as it
// is; the demotion of a key not hot is ignored.
func TestAnEmptyDecisionLeavesTheHotSet(t *testing.T) {
	e := newCopies(t, Params{})
	e.hot("a")
	d := e.c.Det
	before := d.Set.Load()
	d.Mu.Lock()
	changed := d.ApplyLocked(detect.Decision[string]{}, nil)
	d.Mu.Unlock()
	if changed != nil || d.Set.Load() != before {
		t.Errorf("an empty decision changed %v, the hot set replaced: %v", changed, d.Set.Load() != before)
	}
	e.demote("b")
	if d.Lookup("a") == nil || d.Demotions.Load() != 0 {
		t.Errorf("demoting a key not hot: a hot %v, %d demotions", d.Lookup("a") != nil, d.Demotions.Load())
	}
}

// Hit: a local hit is sampled one time in 16, and the sampled one counts
// 16 on its hot entry.
func TestAHotKeysHitsAreSampled(t *testing.T) {
	for _, tc := range []struct {
		name string
		rnd  uint32
		want uint64
	}{
		{name: "the sampled hit counts 16", rnd: 0, want: 16},
		{name: "another counts nothing", rnd: 1 << 31, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCopies(t, Params{})
			en := e.hot("k")
			e.c.Det.Hit("k", tc.rnd)
			e.c.Det.Hit("cold", tc.rnd) // a key not hot: recorded only
			if got := en.Hits.Load(); got != tc.want {
				t.Errorf("Hits = %d, want %d", got, tc.want)
			}
		})
	}
}
