// Package history records what the readers and writers of a fault run did
// and checks the record against the product's two promises: a read never
// returns a version older than one acknowledged more than the bound before
// it began (on any instance, and never older than the instance's own last
// write), nor one whose TTL ran out more than the bound before, and while
// Redis is down hot reads are still served.
//
// Versions of one key grow with each write, and writes of one key are
// serialised by whoever drives the run, so the order of versions is the
// order in which Redis applied them. Version 0 is "absent".
package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Kind says what an operation did.
type Kind uint8

const (
	Read Kind = iota
	Write
)

// Op is one operation: when it began and ended (since the run started),
// on which instance (-1 for a writer outside every instance), on which
// key, and the version it read or wrote.
//
// A run records millions: Op holds no pointer, so they cost the garbage
// collector of the process under test nothing to scan, and its small
// fields come first, so that it packs into 56 bytes (TestOpIsSmall).
type Op struct {
	Kind Kind
	Hot  bool // a read of a key the run keeps hot
	// Failed marks an operation that returned an error: it read nothing,
	// and a write so may or may not have landed.
	Failed bool
	// Reader says how the reader that made it read: busy through a
	// fault, idle before one, or sent just as one began.
	Reader     Reader
	Instance   int
	Key        int64
	Version    int64
	Start, End time.Duration
	// TTL is the expiry a write set, 0 for none the checker needs to know
	// of: Redis deletes the key TTL after it applied the write, unless it
	// is written again first.
	TTL time.Duration
}

// Reader is how a reader reads around a fault: a service's readers are
// not always busy when Redis fails.
type Reader uint8

const (
	// Busy readers read throughout, at their pace.
	Busy Reader = iota
	// Idle readers stop before a fault and read again once it began: a
	// service whose traffic paused meets the fault with a read that
	// finds every connection as the fault left it.
	Idle
	// First is a read sent just as a fault began: on its way when Redis
	// failed.
	First
	readers
)

// String names r in a table.
func (r Reader) String() string { return [...]string{"busy", "idle", "in flight"}[r] }

// Log collects the operations of one goroutine, so recording costs no
// lock; Merge puts the logs together.
type Log struct{ Ops []Op }

func (l *Log) Add(op Op) { l.Ops = append(l.Ops, op) }

// Merge returns the operations of logs in the order they began.
func Merge(logs ...*Log) []Op {
	var ops []Op
	for _, l := range logs {
		ops = append(ops, l.Ops...)
	}
	slices.SortStableFunc(ops, func(a, b Op) int { return int(a.Start - b.Start) })
	return ops
}

// Window is a span of the run in which Redis failed: by default an outage,
// from the fault to the moment Redis answered again.
type Window struct {
	From, To time.Duration
	// Keys, when not nil, limits the outage to the keys it reports: those
	// of one cluster master, while the others answer throughout and their
	// keys stay held to the bound. Nil is every key.
	Keys func(key int64) bool
	// Lost says the writes of its keys begun before From may have been
	// lost (a master killed before it replicated them): a reset of those
	// keys at From.
	Lost bool
	// Answered says Redis answered throughout, if late, or refusing
	// writes for a moment (a failover): reads in the window stay held to
	// the bound, and the window is judged for availability alone.
	Answered bool
	// Partition says only Instance was cut off from Redis while the others
	// reached it and wrote: its reads in the window may serve copies of
	// which it knows nothing newer, knowingly stale by design. They are
	// judged apart (Report.Partitioned: how many, how old), not held to
	// the bound; other instances' reads are not in the window.
	Partition bool
	Instance  int
	// Hung says Redis stopped answering with no fault injected, as a
	// probe of the checker's own proved (a PING it held unanswered): a
	// loaded machine's stall, which the runtime meets as it meets a hung
	// server. Its reads are freed from the bound like any outage's, and
	// not judged for availability: the faults' outages judge that, over
	// spans long enough to.
	Hung bool
}

// covers reports whether the window applies to op.
func (w *Window) covers(op Op) bool {
	return w.coversInstance(op.Instance) && (w.Keys == nil || w.Keys(op.Key))
}

// coversInstance reports whether the window applies to instance inst.
func (w *Window) coversInstance(inst int) bool { return !w.Partition || inst == w.Instance }

// Reset is a moment Redis lost data (a restart without persistence,
// FLUSHALL, eviction): writes of its keys begun before At bind no read that
// ends after it. A loss sent as a command (FLUSHALL, SWAPDB) happens
// between At, when it was sent, and Done, when it was acknowledged: a
// write begun in between may have run before it and been lost, so
// writes begun before Done bind no read that ends after At either.
type Reset struct {
	At   time.Duration
	Done time.Duration        // zero: At
	Keys func(key int64) bool // nil: every key
}

// Run is what Check needs besides the operations.
type Run struct {
	Bound time.Duration
	// Outages are when Redis failed. Reads that overlap an outage (or the
	// Bound after it) may serve unverified copies by design, and are
	// checked for availability instead of staleness; reads in a window
	// where Redis Answered, for both; a cut-off instance's in a Partition,
	// for availability, their staleness counted apart.
	Outages []Window
	// Resets are the moments Redis lost data. An expiry (Op.TTL) is one
	// too, of its key, which the checker finds itself.
	Resets []Reset
	// Heated, when not nil, says whether the workload had made op's key
	// hot on op's instance by the time outage w began (see HeatedBefore):
	// only then is a hot read in w judged for availability. Nil: every
	// read marked Hot is.
	Heated func(w Window, op Op) bool
}

// HeatedBefore returns a Run.Heated for the outages of a run whose
// runtime makes a key hot at qps reads a second, counted in one-second
// slots: a key is hot on an instance when the instance read it at least
// twice qps times in the second before the outage began, so that one of
// the two slots that second overlaps held qps of them before the outage.
// A workload the machine could not drive (two cores shared with other
// work) leaves its keys cold, and a read of a cold key is not one the
// promise keeps available: judging it so would fail the run on the
// machine's load, not on the runtime.
func HeatedBefore(ops []Op, outages []Window, qps float64) func(Window, Op) bool {
	need := int(math.Ceil(2 * qps))
	heated := map[time.Duration]map[[2]int64]bool{}
	for _, w := range outages {
		from := w.From - time.Second
		counts := map[[2]int64]int{}
		for _, op := range ops[sort.Search(len(ops), func(i int) bool { return ops[i].Start >= from }):] {
			if op.Start >= w.From {
				break
			}
			if op.Kind == Read {
				counts[[2]int64{int64(op.Instance), op.Key}]++
			}
		}
		hot := map[[2]int64]bool{}
		for k, n := range counts {
			hot[k] = n >= need
		}
		heated[w.From] = hot
	}
	return func(w Window, op Op) bool { return heated[w.From][[2]int64{int64(op.Instance), op.Key}] }
}

// Stale is a read that returned a version older than one acknowledged
// before it began, or one whose TTL ran out before it began.
type Stale struct {
	Read Op
	// Newer is the earliest write of a newer version acknowledged before
	// the read began; for an expiry, a write of version 0 (absent) that
	// ended when the TTL ran out.
	Newer Op
	Late  time.Duration // Read.Start - Newer.End
}

func (s Stale) String() string {
	if s.Newer.Version == 0 {
		return fmt.Sprintf("instance %d read key %d at %v and got version %d, which expired (TTL) at %v, %v before",
			s.Read.Instance, s.Read.Key, s.Read.Start, s.Read.Version, s.Newer.End, s.Late)
	}
	return fmt.Sprintf("instance %d read key %d at %v and got version %d (returned at %v); version %d was acknowledged at %v, %v before",
		s.Read.Instance, s.Read.Key, s.Read.Start, s.Read.Version, s.Read.End, s.Newer.Version, s.Newer.End, s.Late)
}

// Report is the verdict on a history.
type Report struct {
	Reads, Writes, FailedReads int
	// Stale holds every read older than some acknowledged write;
	// BeyondBound those later than the bound, the promise's violations.
	Stale, BeyondBound []Stale
	// OwnWrites are reads older than the instance's own last write.
	OwnWrites []Stale
	// Staleness is the lateness of every stale read, sorted.
	Staleness []time.Duration

	// During outages: hot reads, and those served; cold reads that
	// failed, and how long those after the first failure took, sorted.
	OutageHotReads, OutageHotServed int
	// OutageUnheated counts the reads marked Hot in outages whose keys the
	// workload had not made hot (Run.Heated): judged neither hot nor cold.
	OutageUnheated int
	// SlowestOutageHotRead is the longest a hot read that began during an
	// outage took, served or not: a hot key answered only after seconds
	// was not kept available.
	SlowestOutageHotRead time.Duration
	OutageColdFailed     int
	ColdFailures         []time.Duration
	// Recovery is, per outage and instance it covered, how soon after it
	// the instance read a cold key again.
	Recovery []Recovery
	// Hot and Cold are the reads that overlapped an outage, of keys the
	// workload had made hot and of cold keys, by kind of reader: how many,
	// how many served, and how long each took.
	Hot, Cold [readers]Took

	// Partitioned holds the stale reads of instances cut off from Redis
	// while others wrote (Window.Partition), judged apart from Stale;
	// PartitionAge is their lateness, sorted.
	Partitioned  []Stale
	PartitionAge []time.Duration
}

// Prompt is how long a read may take to count as served within a
// caller's deadline: a service that reads with a 50 ms context would have
// had every slower read fail.
const Prompt = 50 * time.Millisecond

// Took is what reads of one kind did in outages.
type Took struct {
	// Reads overlapped an outage; Served returned a value or "absent",
	// Within did so within Prompt.
	Reads, Served, Within int
	// Times is how long each read took, served or not, sorted by Check.
	Times []time.Duration
}

// Quantile returns the q-quantile of how long the reads took, 0 when
// there was none.
func (t *Took) Quantile(q float64) time.Duration { return quantile(t.Times, q) }

// add counts op, a read that overlapped an outage.
func (t *Took) add(op Op) {
	t.Reads++
	took := op.End - op.Start
	t.Times = append(t.Times, took)
	if !op.Failed {
		t.Served++
		if took <= Prompt {
			t.Within++
		}
	}
}

// Recovery is how long after an outage ended (Redis answering again) an
// instance's first successful cold read began: the moment it served
// again what only Redis has.
type Recovery struct {
	Outage, Instance int
	After            time.Duration
	Never            bool // no cold read of the instance succeeded after it
}

// Quantile returns the q-quantile of the staleness of stale reads, 0 when
// there is none.
func (r *Report) Quantile(q float64) time.Duration { return quantile(r.Staleness, q) }

// ColdFailure returns the q-quantile of how long the cold reads that
// failed during an outage took, after its first failure; 0 when none.
func (r *Report) ColdFailure(q float64) time.Duration { return quantile(r.ColdFailures, q) }

// PartitionQuantile returns the q-quantile of the lateness of the stale
// reads of cut-off instances, 0 when there is none.
func (r *Report) PartitionQuantile(q float64) time.Duration { return quantile(r.PartitionAge, q) }

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// Check checks ops, sorted by start, against run.
func Check(ops []Op, run Run) Report {
	var r Report
	writes := map[int64][]Op{} // per key, acknowledged, by end: by version too, as writes of a key are serialised
	mine := map[[2]int64][]Op{}
	for _, op := range ops {
		if op.Kind != Write {
			continue
		}
		r.Writes++
		if !op.Failed {
			writes[op.Key] = append(writes[op.Key], op)
			if op.Instance >= 0 {
				k := [2]int64{int64(op.Instance), op.Key}
				mine[k] = append(mine[k], op)
			}
		}
	}
	for _, ws := range writes {
		slices.SortFunc(ws, func(a, b Op) int { return int(a.End - b.End) })
	}
	for _, ws := range mine {
		slices.SortFunc(ws, func(a, b Op) int { return int(a.End - b.End) })
	}
	expired := run.expiries(ops)
	firstFailure := map[int]time.Duration{} // by outage
	recovered := map[[2]int]bool{}          // by outage and instance
	instances := map[int]bool{}
	for _, op := range ops {
		if op.Kind == Write {
			continue
		}
		r.Reads++
		instances[op.Instance] = true
		w, in := run.window(op)
		if in && !run.Outages[w].Hung {
			if op.Hot && run.Heated != nil && !run.Heated(run.Outages[w], op) {
				r.OutageUnheated++
			} else {
				r.windowRead(op, w, firstFailure)
			}
		}
		for i, w := range run.Outages {
			k := [2]int{i, op.Instance}
			if !w.Hung && !op.Hot && !op.Failed && op.Start >= w.To && !recovered[k] && w.covers(op) {
				recovered[k] = true
				r.Recovery = append(r.Recovery, Recovery{Outage: i, Instance: op.Instance, After: op.Start - w.To})
			}
		}
		if op.Failed {
			r.FailedReads++
			continue
		}
		partitioned := in && run.Outages[w].Partition
		if in && !partitioned && !run.Outages[w].Answered {
			continue // Redis could not answer: unverified copies are served by design
		}
		// A reset while the read was on its way (a restart that lost the
		// data before the read was answered) frees it from older writes.
		reset := run.lastReset(op.Key, op.End)
		s, stale := newer(writes[op.Key], op, reset)
		if !stale {
			s, stale = expiredBefore(expired[op.Key], op)
		}
		switch {
		case stale && partitioned:
			r.Partitioned = append(r.Partitioned, s)
			r.PartitionAge = append(r.PartitionAge, s.Late)
		case stale:
			r.Stale = append(r.Stale, s)
			r.Staleness = append(r.Staleness, s.Late)
			if s.Late > run.Bound {
				r.BeyondBound = append(r.BeyondBound, s)
			}
		}
		if ws := mine[[2]int64{int64(op.Instance), op.Key}]; len(ws) > 0 {
			// The instance's own last write acknowledged before the read.
			if i := sort.Search(len(ws), func(i int) bool { return ws[i].End >= op.Start }); i > 0 {
				if last := ws[i-1]; last.Start >= reset && last.Version > op.Version {
					r.OwnWrites = append(r.OwnWrites, Stale{Read: op, Newer: last, Late: op.Start - last.End})
				}
			}
		}
	}
	for i, w := range run.Outages {
		for inst := range instances {
			if !w.Hung && w.coversInstance(inst) && !recovered[[2]int{i, inst}] {
				r.Recovery = append(r.Recovery, Recovery{Outage: i, Instance: inst, Never: true})
			}
		}
	}
	slices.SortFunc(r.Recovery, func(a, b Recovery) int { return cmp.Or(a.Outage-b.Outage, a.Instance-b.Instance) })
	for i := range readers {
		slices.Sort(r.Hot[i].Times)
		slices.Sort(r.Cold[i].Times)
	}
	slices.Sort(r.Staleness)
	slices.Sort(r.ColdFailures)
	slices.Sort(r.PartitionAge)
	return r
}

// expiry is a key deleted by its TTL, surely by at: the acknowledgement
// of the write that set it, plus the TTL.
type expiry struct {
	at      time.Duration
	version int64 // the version it deleted
}

// expiries returns per key the expiries of the acknowledged writes of ops
// that set a TTL and were not overwritten before it ran out, and adds to
// run a reset of each such key at the earliest moment it may have expired
// (the write's start plus its TTL): a read may then find it absent.
func (run *Run) expiries(ops []Op) map[int64][]expiry {
	next := map[int64]time.Duration{} // per key, the start of the write after the one at hand
	out := map[int64][]expiry{}
	for i := len(ops) - 1; i >= 0; i-- {
		w := ops[i]
		if w.Kind != Write {
			continue
		}
		after, overwritten := next[w.Key]
		next[w.Key] = w.Start
		if w.TTL == 0 || w.Failed {
			continue
		}
		if !overwritten || after >= w.Start+w.TTL {
			key := w.Key
			run.Resets = append(run.Resets, Reset{At: w.Start + w.TTL, Keys: func(k int64) bool { return k == key }})
		}
		if !overwritten || after >= w.End+w.TTL {
			out[w.Key] = append(out[w.Key], expiry{at: w.End + w.TTL, version: w.Version})
		}
	}
	return out
}

// expiredBefore returns read as stale when it returned a version that one
// of es, its key's expiries, deleted before the read began: Redis no
// longer had it. An absent key (version 0) is what it should read.
func expiredBefore(es []expiry, read Op) (Stale, bool) {
	for _, e := range es {
		if read.Version != 0 && read.Version <= e.version && e.at < read.Start {
			return Stale{Read: read, Newer: Op{Kind: Write, Instance: -1, Key: read.Key, End: e.at}, Late: read.Start - e.at}, true
		}
	}
	return Stale{}, false
}

// newer returns the earliest write of ws (one key's, by end) newer than
// what read returned, acknowledged before read began and after reset.
func newer(ws []Op, read Op, reset time.Duration) (Stale, bool) {
	end := sort.Search(len(ws), func(i int) bool { return ws[i].End >= read.Start })
	from := sort.Search(end, func(i int) bool { return ws[i].Start >= reset })
	i := from + sort.Search(end-from, func(i int) bool { return ws[from+i].Version > read.Version })
	if i == end {
		return Stale{}, false
	}
	return Stale{Read: read, Newer: ws[i], Late: read.Start - ws[i].End}, true
}

// window reports the window (of Outages) a read overlaps, Bound after its
// end included: a read on its way when Redis went down may be answered
// from an unverified copy, by design.
func (run Run) window(op Op) (int, bool) {
	for i, w := range run.Outages {
		if op.End >= w.From && op.Start <= w.To+run.Bound && w.covers(op) {
			return i, true
		}
	}
	return 0, false
}

// lastReset returns, of the last reset of key at or before t, the
// moment before which a write may have been lost (Reset.Done); -1 when
// none.
func (run Run) lastReset(key int64, t time.Duration) time.Duration {
	last := time.Duration(-1)
	for _, rs := range run.Resets {
		if rs.At <= t && (rs.Keys == nil || rs.Keys(key)) {
			last = max(last, rs.At, rs.Done)
		}
	}
	for _, w := range run.Outages {
		if w.Lost && w.From <= t && (w.Keys == nil || w.Keys(key)) {
			last = max(last, w.From)
		}
	}
	return last
}

// windowRead counts, for availability, a read that overlapped window w.
func (r *Report) windowRead(op Op, w int, firstFailure map[int]time.Duration) {
	if op.Hot {
		r.Hot[op.Reader].add(op)
	} else {
		r.Cold[op.Reader].add(op)
	}
	if op.Hot {
		r.OutageHotReads++
		r.SlowestOutageHotRead = max(r.SlowestOutageHotRead, op.End-op.Start)
		if !op.Failed {
			r.OutageHotServed++
		}
		return
	}
	if !op.Failed {
		return
	}
	r.OutageColdFailed++
	if first, ok := firstFailure[w]; !ok {
		firstFailure[w] = op.End
	} else if op.Start > first {
		r.ColdFailures = append(r.ColdFailures, op.End-op.Start)
	}
}

// Summary describes the first violations of r, for a failure message.
func (r *Report) Summary(limit int) string {
	var b strings.Builder
	for i, s := range r.BeyondBound {
		if i == limit {
			fmt.Fprintf(&b, "… and %d more\n", len(r.BeyondBound)-limit)
			break
		}
		fmt.Fprintf(&b, "stale beyond the bound: %s\n", s)
	}
	for i, s := range r.OwnWrites {
		if i == limit {
			fmt.Fprintf(&b, "… and %d more\n", len(r.OwnWrites)-limit)
			break
		}
		fmt.Fprintf(&b, "older than its own write: %s\n", s)
	}
	return b.String()
}
