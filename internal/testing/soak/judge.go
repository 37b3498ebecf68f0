package soak

import (
	"fmt"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
)

// Problems are how r breaks the product's promises, judged by the
// history and by counts, never by how long something took: reads stale
// beyond the bound (past a TTL's expiry included; the history checker's
// verdict), reads older than their instance's own write and, where Redis
// failed (history.Window), fewer than 99% of hot reads served (of keys
// the workload had made hot: history.HeatedBefore; of the readers idle
// when the fault came, alone too), none judged, or an
// instance that never read a cold key again after Redis answered. A
// cut-off instance's stale reads are not problems: they are counted apart
// (history.Report.Partitioned). How long the slowest hot read and the
// recovery took is TooSlow's, for make soak on a quiet machine: on a
// loaded one under make test, the scheduler decides those.
func Problems(r *history.Report) []string {
	var out []string
	if len(r.BeyondBound) > 0 || len(r.OwnWrites) > 0 {
		out = append(out, fmt.Sprintf("%d reads stale beyond the bound, %d older than their own write, of %d:\n%s",
			len(r.BeyondBound), len(r.OwnWrites), r.Reads, r.Summary(10)))
	}
	if r.OutageHotReads == 0 && r.OutageUnheated > 0 {
		// Not a pass by default: a runtime too slow to drive the
		// workload would otherwise never be judged.
		out = append(out, fmt.Sprintf("while Redis failed no read was of a key the workload had made hot (%d reads of keys it had not): availability was not judged", r.OutageUnheated))
	}
	if r.OutageHotReads == 0 && len(r.Recovery) == 0 {
		return out // Redis never failed
	}
	if float64(r.OutageHotServed) < 0.99*float64(r.OutageHotReads) {
		out = append(out, fmt.Sprintf("while Redis failed %d of %d hot reads were served, want 99%% (%d more of keys the workload had not made hot, not judged)", r.OutageHotServed, r.OutageHotReads, r.OutageUnheated))
	}
	// Readers idle when the fault came are judged alone too: their few
	// reads would not move the whole's share.
	if t := r.Hot[history.Idle]; float64(t.Served) < 0.99*float64(t.Reads) {
		out = append(out, fmt.Sprintf("while Redis failed %d of %d hot reads of readers idle when it began were served, want 99%%", t.Served, t.Reads))
	}
	for _, rc := range r.Recovery {
		if rc.Never {
			out = append(out, fmt.Sprintf("instance %d read no cold key after Redis answered again", rc.Instance))
		}
	}
	return out
}

// TooSlow reports a hot read that took more than a second while Redis
// failed, and an instance that read a cold key again more than a second
// after Redis answered: the goals make soak holds a run to.
func TooSlow(r *history.Report) []string {
	var out []string
	if r.SlowestOutageHotRead > time.Second {
		out = append(out, fmt.Sprintf("while Redis failed a hot read took %v, want within 1s", r.SlowestOutageHotRead))
	}
	for _, rc := range r.Recovery {
		if !rc.Never && rc.After > time.Second {
			out = append(out, fmt.Sprintf("instance %d read a cold key %v after Redis answered again, want within 1s", rc.Instance, rc.After))
		}
	}
	return out
}

// Problems are the phase's report's, a fault that failed, and a fault
// after which no write was acknowledged.
func (p *Phase) Problems() []string {
	out := Problems(&p.Report)
	if p.Trail != "" {
		out = append(out, p.Trail)
	}
	if p.Err != nil {
		out = append(out, fmt.Sprintf("the fault failed, and the phase judges something else: %v", p.Err))
	}
	if p.WritesAfter == 0 {
		out = append(out, fmt.Sprintf("no write acknowledged after the fault (over at %v)", p.Done))
	}
	return out
}
