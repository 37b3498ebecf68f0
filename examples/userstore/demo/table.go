package main

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// printTable writes a compact view of rep, the same data as the live
// page, in one write, so lines printed meanwhile do not cut through it.
func printTable(w io.Writer, elapsed time.Duration, rep runtime.Report) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "── %s ──\n", elapsed.Round(time.Second))
	for _, e := range rep.Entities {
		fmt.Fprintf(&b, "%-6s %8.0f reads/s  hit rate %5.1f%%  traffic share %5.1f%%  promoted %d  demoted %d\n",
			e.Entity, e.ReadsPerSec, 100*e.HitRate, 100*e.TrafficShare, e.Promotions, e.Demotions)
		if len(e.HotKeys) == 0 {
			fmt.Fprintln(&b, "       no hot keys")
			continue
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\thot key\tQPS\thot for\tlocal hits\t")
		for _, k := range e.HotKeys {
			fmt.Fprintf(tw, "\t%s\t%.0f\t%s\t%d\t\n", k.Key, k.QPS, time.Duration(k.HotSeconds)*time.Second, k.Hits)
		}
		tw.Flush()
	}
	fmt.Fprintln(&b)
	w.Write(b.Bytes())
}
