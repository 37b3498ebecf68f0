// Package history records what the readers and writers of a fault run did
// and checks the record against the product's two promises: a read never
// returns a version older than one acknowledged more than the bound before
// it began (on any instance, and never older than the instance's own last
// write), and while Redis is down hot reads are still served.
//
// Versions of one key grow with each write, and writes of one key are
// serialised by whoever drives the run, so the order of versions is the
// order in which Redis applied them. Version 0 is "absent".
package history

import (
	"fmt"
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
type Op struct {
	Kind       Kind
	Instance   int
	Key        int64
	Version    int64
	Start, End time.Duration
	Hot        bool // a read of a key the run keeps hot
	// Failed marks an operation that returned an error: it read nothing,
	// and a write so may or may not have landed. Op holds no pointer, so
	// millions of them cost the garbage collector of the process under
	// test nothing to scan.
	Failed bool
}

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

// Window is a span of the run: an outage, from the fault to the moment
// Redis was back.
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
}

// covers reports whether the window applies to key.
func (w *Window) covers(key int64) bool { return w.Keys == nil || w.Keys(key) }

// Run is what Check needs besides the operations.
type Run struct {
	Bound time.Duration
	// Outages are when Redis could not be reached: reads that overlap
	// one (or the Bound after it) may serve unverified copies by design,
	// and are checked for availability instead of staleness.
	Outages []Window
	// Resets are the moments Redis lost its data (a restart without
	// persistence, FLUSHALL): writes begun before one no longer bind
	// reads that end after it.
	Resets []time.Duration
}

// Stale is a read that returned a version older than one acknowledged
// before it began.
type Stale struct {
	Read  Op
	Newer Op            // the earliest write of a newer version acknowledged before the read began
	Late  time.Duration // Read.Start - Newer.End
}

func (s Stale) String() string {
	return fmt.Sprintf("instance %d read key %d at %v and got version %d; version %d was acknowledged at %v, %v before",
		s.Read.Instance, s.Read.Key, s.Read.Start, s.Read.Version, s.Newer.Version, s.Newer.End, s.Late)
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
	// SlowestOutageHotRead is the longest a hot read that began during an
	// outage took, served or not: a hot key answered only after seconds
	// was not kept available.
	SlowestOutageHotRead time.Duration
	OutageColdFailed     int
	ColdFailures         []time.Duration
	// Recovery is, per outage, how long after it ended the first
	// successful cold read began.
	Recovery []time.Duration
}

// Quantile returns the q-quantile of the staleness of stale reads, 0 when
// there is none.
func (r *Report) Quantile(q float64) time.Duration { return quantile(r.Staleness, q) }

// ColdFailure returns the q-quantile of how long the cold reads that
// failed during an outage took, after its first failure; 0 when none.
func (r *Report) ColdFailure(q float64) time.Duration { return quantile(r.ColdFailures, q) }

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
	firstFailure := map[int]time.Duration{} // by outage
	recovered := map[int]bool{}
	for _, op := range ops {
		if op.Kind == Write {
			continue
		}
		r.Reads++
		w, outage := run.outage(op)
		if outage {
			r.outageRead(op, w, firstFailure)
		}
		for i, w := range run.Outages {
			if !op.Hot && !op.Failed && op.Start >= w.To && !recovered[i] && w.covers(op.Key) {
				recovered[i] = true
				r.Recovery = append(r.Recovery, op.Start-w.To)
			}
		}
		if op.Failed {
			r.FailedReads++
			continue
		}
		if outage {
			continue
		}
		// A reset while the read was on its way (a restart that lost the
		// data before the read was answered) frees it from older writes.
		reset := run.lastReset(op.Key, op.End)
		if s, ok := newer(writes[op.Key], op, reset); ok {
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
	slices.Sort(r.Staleness)
	slices.Sort(r.ColdFailures)
	return r
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

// outage reports the outage a read overlaps, Bound after its end
// included: a read on its way when Redis went down may be answered from
// an unverified copy, by design.
func (run Run) outage(op Op) (int, bool) {
	for i, w := range run.Outages {
		if op.End >= w.From && op.Start <= w.To+run.Bound && w.covers(op.Key) {
			return i, true
		}
	}
	return 0, false
}

// lastReset returns the last reset of key at or before t, -1 when none.
func (run Run) lastReset(key int64, t time.Duration) time.Duration {
	last := time.Duration(-1)
	for _, at := range run.Resets {
		if at <= t {
			last = max(last, at)
		}
	}
	for _, w := range run.Outages {
		if w.Lost && w.From <= t && w.covers(key) {
			last = max(last, w.From)
		}
	}
	return last
}

// outageRead counts a read that began during outage w.
func (r *Report) outageRead(op Op, w int, firstFailure map[int]time.Duration) {
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
