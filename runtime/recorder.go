package runtime

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// slots cuts the detection window so it slides one slot at a time.
	slots = 10
	// ring holds the window's complete slots plus the one being filled.
	ring = slots + 1
	// evictFraction is the share of a full recorder cleared at once, so a
	// flood of new keys pays for one scan per slot, not one per key.
	evictFraction = 0.1
)

// keyCounter counts one key's accesses per slot. Cells are reset by
// Advance before their slot begins, so Record only ever adds.
type keyCounter struct {
	counts [ring]atomic.Uint32
	last   atomic.Int64 // absolute slot of the latest access
	name   string       // the Redis key, built once when tracking starts
}

// KeyRate is a key's measured rate.
type KeyRate[K comparable] struct {
	Key  K
	Name string // the Redis key
	// QPS is the count over the window's complete slots divided by the
	// window length.
	QPS float64
	// Burst is the busier of the previous and the current slot, divided by
	// the slot length: it lets a key that just started burning be promoted
	// before the window catches up. The current slot being partial, Burst
	// never overstates the rate.
	Burst float64
	// Cluster is the key's rate summed over every replica, scaled by
	// HotQPS/ClusterHotQPS so that it compares with the per-instance
	// thresholds; 0 unless Config.Aggregate is on.
	Cluster float64
}

// Score is the rate detection ranks by: the highest of QPS, Burst and
// Cluster.
func (k KeyRate[K]) Score() float64 { return max(k.QPS, k.Burst, k.Cluster) }

// Recorder counts per-key accesses over a sliding window with bounded
// memory. Record is lock-free and does not allocate for a key it already
// tracks; the slot clock is coarse (advanced by Advance), so the read path
// never calls time.Now.
type Recorder[K comparable] struct {
	name       func(K) string
	slot       time.Duration
	window     float64 // seconds
	slotSecs   float64
	burstCount uint32 // accesses in one slot that mark a burst at hot_qps
	capacity   int64
	idleSlots  int64

	m        sync.Map // K -> *keyCounter
	n        atomic.Int64
	cur      atomic.Int64 // absolute slot being filled
	distinct [ring]atomic.Uint32
	refused  atomic.Uint64

	advanceMu sync.Mutex // serialises Advance
}

// NewRecorder returns a recorder for cfg whose clock starts at now; name
// gives a key's Redis key, for ranking ties and reports.
func NewRecorder[K comparable](cfg Config, now time.Time, name func(K) string) *Recorder[K] {
	slot := cfg.Window / slots
	r := &Recorder[K]{
		name:      name,
		slot:      slot,
		window:    cfg.Window.Seconds(),
		slotSecs:  slot.Seconds(),
		capacity:  int64(cfg.RecorderSize),
		idleSlots: int64((cfg.InactiveAfter + slot - 1) / slot),
	}
	r.burstCount = uint32(max(1, cfg.HotQPS*r.slotSecs))
	r.cur.Store(r.slotOf(now))
	return r
}

func (r *Recorder[K]) slotOf(t time.Time) int64 { return t.UnixNano() / int64(r.slot) }

// Slot is the length of one slot, the recorder's time resolution.
func (r *Recorder[K]) Slot() time.Duration { return r.slot }

// Record counts one access to key. It reports true exactly once per slot
// for a key whose count in the current slot reaches the hot rate, so the
// caller can promote it without waiting for a tick.
func (r *Recorder[K]) Record(key K) bool { return r.add(key, 1) }

// sampleBits sets how often RecordSampled counts: one access in
// 1<<sampleBits, weighted to keep the expected count exact.
const sampleBits = 4

// RecordSampled counts an access to a key that is already hot, given a
// uniformly random rnd. Every core reads a hot key, and counting each read
// would bounce the key's counter between them; a hot key's rate is high
// enough that a one-in-16 sample measures it within a few percent. It
// reports whether this access was the one counted.
func (r *Recorder[K]) RecordSampled(key K, rnd uint32) bool {
	if rnd>>(32-sampleBits) != 0 {
		return false
	}
	r.add(key, 1<<sampleBits)
	return true
}

func (r *Recorder[K]) add(key K, w uint32) bool {
	v, ok := r.m.Load(key)
	if !ok {
		if v, ok = r.insert(key); !ok {
			return false
		}
	}
	e := v.(*keyCounter)
	cur := r.cur.Load()
	n := e.counts[cur%ring].Add(w)
	if e.last.Load() != cur && e.last.Swap(cur) != cur {
		r.distinct[cur%ring].Add(1)
	}
	return crossed(n-w, n, r.burstCount)
}

// burstSteps is how many times past the hot rate a key's count in a slot
// is reported again: at 2, 4, 8 and 16 times the burst count.
const burstSteps = 4

// crossed reports whether a count going from prev to n passed the burst
// count or one of its doublings. A key reaching the hot rate is reported
// at once; one that could not then displace a full hot set (its rate
// equals the threshold, short of the margin over the incumbents) is
// reported again as its rate climbs, so it need not wait for the next
// slot's selection.
func crossed(prev, n, burst uint32) bool {
	for t := uint64(burst); t <= uint64(burst)<<burstSteps; t <<= 1 {
		if uint64(n) >= t && uint64(prev) < t {
			return true
		}
	}
	return false
}

// insert starts tracking key unless the recorder is full: a full recorder
// refuses newcomers until Advance evicts the least useful keys, which keeps
// memory bounded however many distinct keys arrive.
func (r *Recorder[K]) insert(key K) (any, bool) {
	if r.n.Add(1) > r.capacity {
		r.n.Add(-1)
		r.refused.Add(1)
		return nil, false
	}
	e := &keyCounter{name: r.name(key)}
	e.last.Store(r.cur.Load() - 1) // not yet counted as distinct in this slot
	v, loaded := r.m.LoadOrStore(key, e)
	if loaded {
		r.n.Add(-1)
	}
	return v, true
}

// Advance moves the window to now: it clears the slots that begin, forgets
// idle keys and, when the recorder is full, evicts the least accessed ones.
func (r *Recorder[K]) Advance(now time.Time) {
	r.advanceMu.Lock()
	defer r.advanceMu.Unlock()
	target := r.slotOf(now)
	cur := r.cur.Load()
	if target <= cur {
		return
	}
	var clear [ring]bool
	for s := cur + 1; s <= target && s <= cur+ring; s++ {
		clear[s%ring] = true
		r.distinct[s%ring].Store(0)
	}
	full := r.n.Load() >= r.capacity
	var scored []evictable
	r.m.Range(func(k, v any) bool {
		e := v.(*keyCounter)
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
			scored = append(scored, evictable{k, total, e.last.Load()})
		}
		return true
	})
	if full && r.n.Load() >= r.capacity {
		r.evict(scored)
	}
	r.cur.Store(target)
}

type evictable struct {
	key   any
	count uint64
	last  int64
}

// evict drops the least accessed tenth of the keys, least recent first on
// ties.
func (r *Recorder[K]) evict(all []evictable) {
	slices.SortFunc(all, func(a, b evictable) int {
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

// Rate returns key's current rate; zero when the key is not tracked.
func (r *Recorder[K]) Rate(key K) KeyRate[K] {
	v, ok := r.m.Load(key)
	if !ok {
		return KeyRate[K]{Key: key, Name: r.name(key)}
	}
	return r.rate(key, v.(*keyCounter), r.cur.Load())
}

func (r *Recorder[K]) rate(key K, e *keyCounter, cur int64) KeyRate[K] {
	var sum uint64
	for i := range e.counts {
		if int64(i) != cur%ring {
			sum += uint64(e.counts[i].Load())
		}
	}
	now := e.counts[cur%ring].Load()
	prev := e.counts[(cur+ring-1)%ring].Load()
	return KeyRate[K]{
		Key:   key,
		Name:  e.name,
		QPS:   float64(sum) / r.window,
		Burst: float64(max(now, prev)) / r.slotSecs,
	}
}

// Rates returns every tracked key whose Score is at least min, in no
// particular order.
func (r *Recorder[K]) Rates(min float64) []KeyRate[K] {
	cur := r.cur.Load()
	var out []KeyRate[K]
	r.m.Range(func(k, v any) bool {
		if kr := r.rate(k.(K), v.(*keyCounter), cur); kr.Score() >= min {
			out = append(out, kr)
		}
		return true
	})
	return out
}

// SlotCount is one key's reads in one slot.
type SlotCount[K comparable] struct {
	Key   K
	Name  string // the Redis key
	Count uint32
}

// Top returns the n keys read most in slot, an absolute slot number, most
// read first and ties by name. slot must be complete and still within the
// window, that is one of the slots before the current one; for any other
// slot Top returns nil. It scans the tracked keys once and keeps n of
// them, so memory stays O(n) whatever the number of keys.
func (r *Recorder[K]) Top(slot int64, n int) []SlotCount[K] {
	r.advanceMu.Lock() // the slot's cell is not cleared while it is read
	defer r.advanceMu.Unlock()
	cur := r.cur.Load()
	if n <= 0 || slot >= cur || slot <= cur-ring {
		return nil
	}
	cell := slot % ring
	h := make(topHeap[K], 0, n)
	r.m.Range(func(k, v any) bool {
		e := v.(*keyCounter)
		c := e.counts[cell].Load()
		if c == 0 {
			return true
		}
		sc := SlotCount[K]{Key: k.(K), Name: e.name, Count: c}
		if len(h) < n {
			h.push(sc)
		} else if h.less(h[0], sc) {
			h[0] = sc
			h.down(0)
		}
		return true
	})
	slices.SortFunc(h, func(a, b SlotCount[K]) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return h
}

// topHeap is a min-heap of counts whose root is the entry Top would drop
// first: the lowest count, and of equal counts the greatest name.
type topHeap[K comparable] []SlotCount[K]

func (h topHeap[K]) less(a, b SlotCount[K]) bool {
	if a.Count != b.Count {
		return a.Count < b.Count
	}
	return a.Name > b.Name
}

func (h *topHeap[K]) push(sc SlotCount[K]) {
	*h = append(*h, sc)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(s[i], s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h topHeap[K]) down(i int) {
	for {
		l, m := 2*i+1, i
		if l < len(h) && h.less(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && h.less(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Len is the number of keys tracked.
func (r *Recorder[K]) Len() int { return int(r.n.Load()) }

// Refused counts accesses to new keys turned away while the recorder was
// full.
func (r *Recorder[K]) Refused() uint64 { return r.refused.Load() }

// DistinctPerSec is the number of distinct keys read in the last complete
// slot, per second.
func (r *Recorder[K]) DistinctPerSec() float64 {
	cur := r.cur.Load()
	return float64(r.distinct[(cur+ring-1)%ring].Load()) / r.slotSecs
}
