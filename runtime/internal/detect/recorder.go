package detect

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Detection counts every access in two layers, both of a size fixed
// whatever the number of distinct keys and their length:
//
//   - a count-min sketch per slot counts each access under the key's hash:
//     a flat array of counters the garbage collector never scans, cleared
//     one slot at a time, so that a tick costs the same with ten keys as
//     with ten million;
//   - a table of candidates, the few keys whose count in one slot reached
//     a fraction of the warm rate, counts those exactly and holds their
//     names, for selection, aggregation reports and logs.
//
// A key is admitted the moment the sketch says it may matter, with its
// earlier slots seeded from the sketch, so admission loses no history. A
// full table never turns a newcomer away: it drops its weakest quarter
// instead, folding their counts back into the sketch.
const (
	// Slots cuts the detection window so it slides one slot at a time.
	Slots = 10
	// Ring holds the window's complete slots plus the one being filled.
	Ring = Slots + 1

	// sketchDepth rows of sketchWidth counters make one slot's sketch:
	// 64 KiB, 704 KiB for the ring. With 100,000 accesses in a slot a
	// cell collects about 25 of other keys', and the least of four such
	// cells is far below any admission threshold that matters.
	sketchDepth = 2
	sketchWidth = 1 << 13
	sketchCells = sketchDepth * sketchWidth

	// filterBits is the size of the bitmap of candidate hashes, which
	// spares the accesses of every other key a map lookup.
	filterBits = 1 << 16

	// candidateCost is what a candidate costs beyond its name, in bytes,
	// for the byte budget: the counters, the map entry, the key.
	candidateCost = 160
	// nameBudgetPerCandidate sets the bytes of key names the candidates
	// may hold, per candidate slot: 256 KiB at the default size. A key
	// whose name alone takes more than a sixteenth of the budget is
	// counted by the sketch but never becomes a candidate, so it is never
	// served from memory.
	nameBudgetPerCandidate = 256
)

// candidate counts one key's accesses per slot, exactly. Cells are reset
// by Advance before their slot begins, so Record only ever adds.
type candidate struct {
	counts [Ring]atomic.Uint32
	last   atomic.Int64 // absolute slot of the latest access
	name   string       // the Redis key
	hash   uint64
}

// cost is what c counts against the byte budget: its name, and the key,
// which for a string key holds about as many bytes.
func (c *candidate) cost() int64 { return int64(2*len(c.name)) + candidateCost }

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

// Recorder counts per-key accesses over a sliding window in a fixed amount
// of memory. Record is lock-free and never allocates, except when it
// admits a candidate; the slot clock is coarse (advanced by Advance), so
// the read path never calls time.Now.
type Recorder[K comparable] struct {
	name       func(K) string
	seed       maphash.Seed
	slot       time.Duration
	window     float64 // seconds
	slotSecs   float64
	burstCount uint32 // accesses in one slot that mark a burst at hot_qps
	admitCount uint32 // accesses in one slot that make a key a candidate
	capacity   int64
	budget     int64 // bytes the candidates may cost
	idleSlots  int64

	sketch   *[Ring][sketchCells]atomic.Uint32
	filter   [filterBits / 64]atomic.Uint64
	cands    sync.Map // K -> *candidate
	n        atomic.Int64
	bytes    atomic.Int64
	cur      atomic.Int64 // absolute slot being filled
	distinct [Ring]atomic.Uint32
	tooLong  atomic.Uint64
	// floor is the count over the ring of the weakest candidate a full
	// table kept: a newcomer must beat it to be admitted (see beatsFloor).
	floor atomic.Uint64

	admitMu   sync.Mutex // serialises admissions and evictions
	advanceMu sync.Mutex // serialises Advance
}

// Params are the entity's settings detection depends on, as the runtime's
// Config validated them.
type Params struct {
	Window        time.Duration // the sliding window, cut in Slots slots
	HotQPS        float64
	WarmQPS       float64
	RecorderSize  int           // candidates tracked by name at most
	InactiveAfter time.Duration // a candidate idle this long is forgotten
	// Aggregate admits every key, since a replica's share of a key hot
	// over all of them may be a single read.
	Aggregate bool
}

// NewRecorder returns a recorder for cfg whose clock starts at now; name
// gives a key's Redis key, for ranking ties and reports.
func NewRecorder[K comparable](cfg Params, now time.Time, name func(K) string) *Recorder[K] {
	slot := cfg.Window / Slots
	r := &Recorder[K]{
		name:      name,
		seed:      maphash.MakeSeed(),
		slot:      slot,
		window:    cfg.Window.Seconds(),
		slotSecs:  slot.Seconds(),
		capacity:  int64(cfg.RecorderSize),
		budget:    int64(cfg.RecorderSize) * (candidateCost + nameBudgetPerCandidate),
		idleSlots: int64((cfg.InactiveAfter + slot - 1) / slot),
		sketch:    new([Ring][sketchCells]atomic.Uint32),
	}
	// Clamped as admitCount is: a rate beyond any count converts to 0,
	// and crossed's doublings of 0 would never end.
	r.burstCount = uint32(max(1, min(cfg.HotQPS*r.slotSecs, math.MaxUint32)))
	// A key matters once its rate may reach the warm rate, so it is
	// admitted at half of it in one slot (and, once the table is full, if
	// it also outcounts the weakest candidate or bursts). With cluster-wide
	// detection a replica's share of a key hot over all of them may be as
	// small as one read, so every key is admitted and the table, dropping
	// its weakest, keeps the busiest for the reports.
	admit := min(cfg.HotQPS, cfg.WarmQPS) * r.slotSecs / 2
	if cfg.Aggregate {
		admit = 1
	}
	r.admitCount = uint32(max(1, min(admit, math.MaxUint32)))
	r.cur.Store(r.slotOf(now))
	return r
}

func (r *Recorder[K]) slotOf(t time.Time) int64 { return t.UnixNano() / int64(r.slot) }

// Current is the absolute slot being filled: the time Advance last saw,
// divided by the slot length.
func (r *Recorder[K]) Current() int64 { return r.cur.Load() }

// Slot is the length of one slot, the recorder's time resolution.
func (r *Recorder[K]) Slot() time.Duration { return r.slot }

// Record counts one access to key. It reports true exactly once per slot
// for a key whose count in the current slot reaches the hot rate, so the
// caller can promote it without waiting for a tick.
func (r *Recorder[K]) Record(key K) bool { return r.add(key, 1) }

// SampleBits sets how often RecordSampled counts: one access in
// 1<<SampleBits, weighted to keep the expected count exact.
const SampleBits = 4

// RecordSampled counts an access to a key that is already hot, given a
// uniformly random rnd. Every core reads a hot key, and counting each read
// would bounce the key's counter between them; a hot key's rate is high
// enough that a one-in-16 sample measures it within a few percent. It
// reports whether this access was the one counted.
func (r *Recorder[K]) RecordSampled(key K, rnd uint32) bool {
	if rnd>>(32-SampleBits) != 0 {
		return false
	}
	r.add(key, 1<<SampleBits)
	return true
}

func (r *Recorder[K]) add(key K, w uint32) bool {
	h := maphash.Comparable(r.seed, key)
	cur := r.cur.Load()
	if r.filtered(h) {
		if v, ok := r.cands.Load(key); ok {
			return r.count(v.(*candidate), cur, w)
		}
	}
	// Every other key is counted in the sketch, unless this access makes
	// it a candidate: then its count moves to the candidate, and the
	// sketch holds only the keys that are not candidates.
	cells := &r.sketch[cur%Ring]
	var idx [sketchDepth]int
	var v [sketchDepth]uint32
	least := uint32(math.MaxUint32)
	for i := range sketchDepth {
		idx[i] = cellOf(h, i)
		v[i] = cells[idx[i]].Load()
		least = min(least, v[i])
	}
	n := least + w
	if n >= r.admitCount && (n >= r.burstCount || r.n.Load() < r.capacity || r.beatsFloor(h)) {
		if c, ok := r.admit(key, h, cur, least); ok {
			return r.count(c, cur, w)
		}
	}
	if least == 0 {
		r.distinct[cur%Ring].Add(1) // its first access in the slot
	}
	// The conservative update: only the rows holding the least count
	// are raised, which keeps the estimates of keys sharing the other
	// rows' cells from growing.
	for i := range sketchDepth {
		if v[i] < n {
			cells[idx[i]].Add(w)
		}
	}
	return false
}

// count adds w accesses to candidate c in slot cur and reports whether
// they carried its count past the burst count or a doubling of it.
func (r *Recorder[K]) count(c *candidate, cur int64, w uint32) bool {
	n := c.counts[cur%Ring].Add(w)
	if c.last.Load() != cur && c.last.Swap(cur) != cur {
		r.distinct[cur%Ring].Add(1)
	}
	return crossed(n-w, n, r.burstCount)
}

// beatsFloor reports whether the key hashed h counts, over the window,
// clearly more than the weakest candidate a full table kept: by an eighth
// and the admission count, so keys of about the same rate do not take
// turns evicting each other.
func (r *Recorder[K]) beatsFloor(h uint64) bool {
	floor := r.floor.Load()
	return r.windowEstimate(h) > floor+floor/8+uint64(r.admitCount)
}

// windowEstimate is the sketch's count of the key hashed h over the whole
// ring, to rank it against the candidates.
func (r *Recorder[K]) windowEstimate(h uint64) uint64 {
	var total uint64
	for s := range Ring {
		total += uint64(r.estimate(h, s))
	}
	return total
}

// cellOf is the cell of row i that counts the key hashed h: each row reads
// its own 16 bits of the hash.
func cellOf(h uint64, i int) int {
	return i*sketchWidth + int(h>>(16*i))&(sketchWidth-1)
}

// estimate is the sketch's count of the key hashed h in the ring cell s.
func (r *Recorder[K]) estimate(h uint64, s int) uint32 {
	cells := &r.sketch[s]
	least := uint32(math.MaxUint32)
	for i := range sketchDepth {
		least = min(least, cells[cellOf(h, i)].Load())
	}
	return least
}

// filtered reports whether the key hashed h may be a candidate; false is
// certain.
func (r *Recorder[K]) filtered(h uint64) bool {
	bit := h >> 48 // the bits no sketch row reads
	return r.filter[bit/64].Load()&(1<<(bit%64)) != 0
}

func (r *Recorder[K]) setFilter(h uint64) {
	bit := h >> 48
	r.filter[bit/64].Or(1 << (bit % 64))
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

// admit makes key, hashed h, a candidate, its slots seeded from the
// sketch and its count in the current slot from before, the sketch's
// estimate of it before this access; the caller then counts the access.
// A full table first drops its weakest quarter. It returns the candidate,
// or false for a key whose name alone is too long to be worth its bytes.
func (r *Recorder[K]) admit(key K, h uint64, cur int64, before uint32) (*candidate, bool) {
	r.admitMu.Lock()
	defer r.admitMu.Unlock()
	if v, ok := r.cands.Load(key); ok {
		return v.(*candidate), true // admitted by another access meanwhile
	}
	c := &candidate{name: r.name(key), hash: h}
	if c.cost() > r.budget/16 {
		r.tooLong.Add(1)
		return nil, false
	}
	if r.n.Load() >= r.capacity || r.bytes.Load()+c.cost() > r.budget {
		r.evictLocked(c.cost())
	}
	for s := range Ring {
		c.counts[s].Store(r.estimate(h, s))
	}
	c.counts[cur%Ring].Store(before)
	if before > 0 {
		c.last.Store(cur) // counted as distinct in this slot already
	} else {
		c.last.Store(cur - 1)
	}
	r.cands.Store(key, c)
	r.n.Add(1)
	r.bytes.Add(c.cost())
	r.setFilter(h)
	return c, true
}

// evictLocked drops the weakest quarter of the candidates, the least
// accessed over the window first, least recent first on ties, and more
// while need bytes do not fit. Their counts go back into the sketch, so a
// key dropped and admitted again keeps its history.
func (r *Recorder[K]) evictLocked(need int64) {
	type weak struct {
		key   any
		c     *candidate
		total uint64
	}
	var all []weak
	r.cands.Range(func(k, v any) bool {
		c := v.(*candidate)
		var total uint64
		for i := range c.counts {
			total += uint64(c.counts[i].Load())
		}
		all = append(all, weak{k, c, total})
		return true
	})
	slices.SortFunc(all, func(a, b weak) int {
		return cmp.Or(cmp.Compare(a.total, b.total), cmp.Compare(a.c.last.Load(), b.c.last.Load()))
	})
	quarter := max(1, len(all)/4)
	for i, w := range all {
		if i >= quarter && r.bytes.Load()+need <= r.budget {
			r.floor.Store(w.total)
			return
		}
		r.dropLocked(w.key, w.c)
	}
	r.floor.Store(0)
}

// dropLocked forgets candidate c of key k, folding its counts back into
// the sketch.
func (r *Recorder[K]) dropLocked(k any, c *candidate) {
	for s := range Ring {
		n, est := c.counts[s].Load(), r.estimate(c.hash, s)
		if n <= est {
			continue
		}
		for i := range sketchDepth {
			r.sketch[s][cellOf(c.hash, i)].Add(n - est)
		}
	}
	r.cands.Delete(k)
	r.n.Add(-1)
	r.bytes.Add(-c.cost())
}

// Advance moves the window to now: it clears the slots that begin, in the
// sketch and the candidates, and forgets idle candidates. Its work is
// bounded by the sketch and the table, never by the number of keys read.
func (r *Recorder[K]) Advance(now time.Time) {
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
		cells := &r.sketch[s%Ring]
		for i := range cells {
			cells[i].Store(0)
		}
	}
	r.admitMu.Lock()
	var filter [filterBits / 64]uint64
	floor := uint64(math.MaxUint64)
	r.cands.Range(func(k, v any) bool {
		c := v.(*candidate)
		if target-c.last.Load() > r.idleSlots {
			r.cands.Delete(k)
			r.n.Add(-1)
			r.bytes.Add(-c.cost())
			return true
		}
		var total uint64
		for i := range c.counts {
			if clear[i] {
				c.counts[i].Store(0)
			}
			total += uint64(c.counts[i].Load())
		}
		floor = min(floor, total)
		bit := c.hash >> 48
		filter[bit/64] |= 1 << (bit % 64)
		return true
	})
	for i := range filter {
		r.filter[i].Store(filter[i])
	}
	if r.n.Load() < r.capacity {
		floor = 0
	}
	r.floor.Store(floor)
	r.admitMu.Unlock()
	r.cur.Store(target)
}

// Rate returns key's current rate: exact for a candidate, the sketch's
// estimate for any other key.
func (r *Recorder[K]) Rate(key K) KeyRate[K] {
	cur := r.cur.Load()
	if v, ok := r.cands.Load(key); ok {
		return r.rate(key, v.(*candidate), cur)
	}
	h := maphash.Comparable(r.seed, key)
	var counts [Ring]uint32
	for s := range Ring {
		counts[s] = r.estimate(h, s)
	}
	return r.rateOf(key, r.name(key), &counts, cur)
}

func (r *Recorder[K]) rate(key K, c *candidate, cur int64) KeyRate[K] {
	var counts [Ring]uint32
	for s := range Ring {
		counts[s] = c.counts[s].Load()
	}
	return r.rateOf(key, c.name, &counts, cur)
}

func (r *Recorder[K]) rateOf(key K, name string, counts *[Ring]uint32, cur int64) KeyRate[K] {
	var sum uint64
	for i, n := range counts {
		if int64(i) != cur%Ring {
			sum += uint64(n)
		}
	}
	now, prev := counts[cur%Ring], counts[(cur+Ring-1)%Ring]
	return KeyRate[K]{
		Key:   key,
		Name:  name,
		QPS:   float64(sum) / r.window,
		Burst: float64(max(now, prev)) / r.slotSecs,
	}
}

// Rates returns every candidate whose Score is at least min, in no
// particular order.
func (r *Recorder[K]) Rates(min float64) []KeyRate[K] {
	cur := r.cur.Load()
	var out []KeyRate[K]
	r.cands.Range(func(k, v any) bool {
		if kr := r.rate(k.(K), v.(*candidate), cur); kr.Score() >= min {
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

// Top returns the n candidates read most in slot, an absolute slot
// number, most read first and ties by name. slot must be complete and
// still within the window, that is one of the slots before the current
// one; for any other slot Top returns nil.
func (r *Recorder[K]) Top(slot int64, n int) []SlotCount[K] {
	r.advanceMu.Lock() // the slot's cell is not cleared while it is read
	defer r.advanceMu.Unlock()
	cur := r.cur.Load()
	if n <= 0 || slot >= cur || slot <= cur-Ring {
		return nil
	}
	cell := slot % Ring
	h := make(topHeap[K], 0, n)
	r.cands.Range(func(k, v any) bool {
		c := v.(*candidate)
		count := c.counts[cell].Load()
		if count == 0 {
			return true
		}
		sc := SlotCount[K]{Key: k.(K), Name: c.name, Count: count}
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

// Len is the number of candidates, the keys tracked by name.
func (r *Recorder[K]) Len() int { return int(r.n.Load()) }

// NameBytes is what the candidates cost against the byte budget.
func (r *Recorder[K]) NameBytes() int64 { return r.bytes.Load() }

// TooLong counts admissions refused because a key's name alone was too
// long to hold.
func (r *Recorder[K]) TooLong() uint64 { return r.tooLong.Load() }

// LongestName is the longest key name, in bytes, that may become a
// candidate: one whose cost is within a sixteenth of the budget (admit).
func (r *Recorder[K]) LongestName() int { return int((r.budget/16 - candidateCost) / 2) }

// DistinctPerSec is the number of distinct keys read in the last complete
// slot, per second, as the sketch tells them apart: keys sharing all their
// cells count once, so it may fall a little short.
func (r *Recorder[K]) DistinctPerSec() float64 {
	cur := r.cur.Load()
	return float64(r.distinct[(cur+Ring-1)%Ring].Load()) / r.slotSecs
}
