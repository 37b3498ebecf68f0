package soak

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
)

// Table prints one row per run and fault, and one per run for the whole.
func Table(w io.Writer, results []*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\treaders\tfault\treads\twrites\tstale\tstale > bound\tp50\tp99\tp99.9\tmax\tcut off: stale (p99, max)\thot reads served in outage\tcold failures p99, slowest\trecovery, shared client\trecovery, others\t")
	for _, res := range results {
		readers := "paced"
		if res.Config.Saturating {
			readers = "saturating"
		}
		mode := res.Config.Mode
		switch {
		case res.Config.Sentinel:
			mode += " (sentinel)"
		case res.Config.Cluster:
			mode += " (cluster)"
		case res.Config.Replica:
			mode += " (replica)"
		}
		if res.Config.Hash {
			mode += " (hash)"
		}
		for _, p := range res.Phases {
			row(tw, mode, readers, p.Fault.Name, &p.Report)
		}
		row(tw, mode, readers, fmt.Sprintf("whole run (breakers opened %d times, %d outside faults and hangs; Redis hung %s outside faults)", len(res.Openings), res.FalseOpenings(), hangs(res.Hangs)), &res.Total)
	}
	tw.Flush()
}

// OutageTable prints, for each phase of results whose fault made Redis
// fail, what each kind of reader saw (history.Reader): the share of hot
// reads served, and served within history.Prompt (a caller's 50 ms
// deadline); the busy readers' hot reads a second in the outage against
// the second before it; how long hot and cold reads took (p99, slowest);
// and the reads stale beyond the bound.
func OutageTable(w io.Writer, results []*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tfault\treaders\thot reads\tserved\twithin 50 ms\thot reads/s, of before\thot p99, slowest\tcold reads\tcold p99, slowest\tstale > bound\t")
	for _, res := range results {
		if res.Config.Saturating {
			continue
		}
		for _, p := range res.Phases {
			r := &p.Report
			if r.Hot[history.Busy].Reads+r.Hot[history.Idle].Reads == 0 {
				continue
			}
			for rd := history.Busy; rd <= history.First; rd++ {
				hot, cold := r.Hot[rd], r.Cold[rd]
				rate, beyond := "-", "-"
				if rd == history.Busy {
					rate = fmt.Sprintf("%.0f, %.0f%%", p.HotRate.During, 100*p.HotRate.During/max(p.HotRate.Before, 1))
					beyond = fmt.Sprint(len(r.BeyondBound))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n", res.Config.Mode, p.Fault.Name, rd, hot.Reads,
					share(hot.Served, hot.Reads), share(hot.Within, hot.Reads), rate, took(&hot), cold.Reads, took(&cold), beyond)
			}
		}
	}
	tw.Flush()
}

// share is n of all as a percentage, "-" of none.
func share(n, all int) string {
	if all == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(n)/float64(all))
}

// took is how long t's reads took: p99 and slowest, "-" without one.
func took(t *history.Took) string {
	if t.Reads == 0 {
		return "-"
	}
	return dur(t.Quantile(0.99)) + ", " + dur(t.Quantile(1))
}

func row(w io.Writer, mode, readers, fault string, r *history.Report) {
	served := "-"
	if r.OutageHotReads > 0 {
		served = fmt.Sprintf("%.2f%% of %d, slowest %s", 100*float64(r.OutageHotServed)/float64(r.OutageHotReads), r.OutageHotReads, dur(r.SlowestOutageHotRead))
	}
	if r.OutageUnheated > 0 {
		served += fmt.Sprintf(" (%d of keys not hot yet)", r.OutageUnheated)
	}
	slowest, cut := "-", "-"
	if r.OutageColdFailed > 0 {
		slowest = dur(r.ColdFailure(0.99)) + ", " + dur(r.ColdFailure(1))
	}
	if len(r.Partitioned) > 0 {
		cut = fmt.Sprintf("%d (%s, %s)", len(r.Partitioned), dur(r.PartitionQuantile(0.99)), dur(r.PartitionQuantile(1)))
	}
	shared := func(inst int) bool { return inst == sharedClient }
	others := func(inst int) bool { return inst != sharedClient }
	fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", mode, readers, fault, r.Reads, r.Writes,
		len(r.Stale), len(r.BeyondBound), dur(r.Quantile(0.5)), dur(r.Quantile(0.99)), dur(r.Quantile(0.999)), dur(r.Quantile(1)),
		cut, served, slowest, recovery(r.Recovery, shared), recovery(r.Recovery, others))
}

// recovery is the slowest recovery of the instances pick selects, "never"
// when one of them read no cold key after an outage, "-" without one.
func recovery(rs []history.Recovery, pick func(inst int) bool) string {
	slowest, any := time.Duration(0), false
	for _, rc := range rs {
		if !pick(rc.Instance) {
			continue
		}
		if rc.Never {
			return "never"
		}
		slowest, any = max(slowest, rc.After), true
	}
	if !any {
		return "-"
	}
	return dur(slowest)
}

func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	default:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
}

// hangs describes the hangs the probe found: how many, and the longest.
func hangs(ws []history.Window) string {
	if len(ws) == 0 {
		return "0 times"
	}
	var longest time.Duration
	for _, w := range ws {
		longest = max(longest, w.To-w.From)
	}
	return fmt.Sprintf("%d times, longest %v", len(ws), longest.Round(time.Millisecond))
}
