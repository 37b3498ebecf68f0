package detect

// This file keeps the recorder of hotkeygen 0.1 as it was, a sync.Map of
// exact counters for up to recorder_size keys, so that benchmarks compare
// the sketch-based Recorder against it in the same run (see
// BENCHMARKS.md, "Detection"). Nothing but benchmarks uses it.

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// evictFraction is the share of a full mapRecorder cleared at once;
// mapRecorderSize was its capacity, the default recorder_size of 0.1.
const (
	evictFraction   = 0.1
	mapRecorderSize = 100_000
)

// mapCounter counts one key's accesses per slot. Cells are reset by
// Advance before their slot begins, so Record only ever adds.
type mapCounter struct {
	counts [Ring]atomic.Uint32
	last   atomic.Int64 // absolute slot of the latest access
	name   string       // the Redis key, built once when tracking starts
}

// mapRecorder is the recorder hotkeygen shipped before the sketch: it counts per-key accesses over a sliding window with bounded
// memory. Record is lock-free and does not allocate for a key it already
// tracks; the slot clock is coarse (advanced by Advance), so the read path
// never calls time.Now.
type mapRecorder[K comparable] struct {
	name       func(K) string
	slot       time.Duration
	window     float64 // seconds
	slotSecs   float64
	burstCount uint32 // accesses in one slot that mark a burst at hot_qps
	capacity   int64
	idleSlots  int64

	m        sync.Map // K -> *mapCounter
	n        atomic.Int64
	cur      atomic.Int64 // absolute slot being filled
	distinct [Ring]atomic.Uint32
	refused  atomic.Uint64

	advanceMu sync.Mutex // serialises Advance
}

// newMapRecorder returns a recorder for cfg whose clock starts at now; name
// gives a key's Redis key, for ranking ties and reports.
func newMapRecorder[K comparable](cfg Params, now time.Time, name func(K) string) *mapRecorder[K] {
	slot := cfg.Window / Slots
	r := &mapRecorder[K]{
		name:      name,
		slot:      slot,
		window:    cfg.Window.Seconds(),
		slotSecs:  slot.Seconds(),
		capacity:  mapRecorderSize,
		idleSlots: int64((cfg.InactiveAfter + slot - 1) / slot),
	}
	r.burstCount = uint32(max(1, cfg.HotQPS*r.slotSecs))
	r.cur.Store(r.slotOf(now))
	return r
}

func (r *mapRecorder[K]) slotOf(t time.Time) int64 { return t.UnixNano() / int64(r.slot) }

// Record counts one access to key.
func (r *mapRecorder[K]) Record(key K) bool { return r.add(key, 1) }

func (r *mapRecorder[K]) add(key K, w uint32) bool {
	v, ok := r.m.Load(key)
	if !ok {
		if v, ok = r.insert(key); !ok {
			return false
		}
	}
	e := v.(*mapCounter)
	cur := r.cur.Load()
	n := e.counts[cur%Ring].Add(w)
	if e.last.Load() != cur && e.last.Swap(cur) != cur {
		r.distinct[cur%Ring].Add(1)
	}
	return crossed(n-w, n, r.burstCount)
}

// insert starts tracking key unless the recorder is full: a full recorder
// refuses newcomers until Advance evicts the least useful keys, which keeps
// memory bounded however many distinct keys arrive.
func (r *mapRecorder[K]) insert(key K) (any, bool) {
	if r.n.Add(1) > r.capacity {
		r.n.Add(-1)
		r.refused.Add(1)
		return nil, false
	}
	e := &mapCounter{name: r.name(key)}
	e.last.Store(r.cur.Load() - 1) // not yet counted as distinct in this slot
	v, loaded := r.m.LoadOrStore(key, e)
	if loaded {
		r.n.Add(-1)
	}
	return v, true
}

// Advance moves the window to now: it clears the slots that begin, forgets
// idle keys and, when the recorder is full, evicts the least accessed ones.
func (r *mapRecorder[K]) Advance(now time.Time) {
	r.advanceMu.Lock()
	defer r.advanceMu.Unlock()
	target := r.slotOf(now)
	cur := r.cur.Load()
	if target <= cur {
		return
	}
	var clear [Ring]bool
	for s := cur + 1; s <= target && s <= cur+Ring; s++ {
		clear[s%Ring] = true
		r.distinct[s%Ring].Store(0)
	}
	full := r.n.Load() >= r.capacity
	var scored []mapEvictable
	r.m.Range(func(k, v any) bool {
		e := v.(*mapCounter)
		if target-e.last.Load() > r.idleSlots {
			r.m.Delete(k)
			r.n.Add(-1)
			return true
		}
		var total uint64
		for i := range e.counts {
			if clear[i] {
				e.counts[i].Store(0)
			}
			total += uint64(e.counts[i].Load())
		}
		if full {
			scored = append(scored, mapEvictable{k, total, e.last.Load()})
		}
		return true
	})
	if full && r.n.Load() >= r.capacity {
		r.evict(scored)
	}
	r.cur.Store(target)
}

type mapEvictable struct {
	key   any
	count uint64
	last  int64
}

// evict drops the least accessed tenth of the keys, least recent first on
// ties.
func (r *mapRecorder[K]) evict(all []mapEvictable) {
	slices.SortFunc(all, func(a, b mapEvictable) int {
		if c := cmp.Compare(a.count, b.count); c != 0 {
			return c
		}
		return cmp.Compare(a.last, b.last)
	})
	n := max(1, int(float64(len(all))*evictFraction))
	for _, e := range all[:min(n, len(all))] {
		r.m.Delete(e.key)
		r.n.Add(-1)
	}
}

// Len is the number of keys tracked.
func (r *mapRecorder[K]) Len() int { return int(r.n.Load()) }
