package main

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// printTable writes a compact view of rep, the same data as the live
// page, in one write, so lines printed meanwhile do not cut through it.
func printTable(w io.Writer, elapsed time.Duration, rep livepage.Report) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "── %s ──\n", elapsed.Round(time.Second))
	for _, e := range rep.Entities {
		share := "     -"
		if e.MemoryShare != nil {
			share = fmt.Sprintf("%5.1f%%", 100**e.MemoryShare)
		}
		fmt.Fprintf(&b, "%-6s %8.0f reads/s  from memory %s  Redis errors %.0f/s  stale %.0f/s  promoted %d  demoted %d%s\n",
			e.Entity, e.ReadsPerSec, share, e.RedisErrorsPerSec, e.StaleReadsPerSec, e.Promotions, e.Demotions, trouble(e))
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

// trouble says what is wrong with e's Redis or invalidation, if anything.
func trouble(e livepage.EntityReport) string {
	var s string
	if e.RedisDownSince != nil {
		s += "  REDIS UNREACHABLE since " + e.RedisDownSince.Format("15:04:05")
	}
	if e.InvalidationDownSince != nil {
		s += "  invalidation lost since " + e.InvalidationDownSince.Format("15:04:05")
	}
	return s
}

// printDatabase writes a line on r's database: its queries in the last
// second against the reads the repositories served.
func printDatabase(w io.Writer, r *repos) {
	fmt.Fprintf(w, "database  %d queries/s for %.0f reads/s served (%s)\n", r.queriesPerSec.Load(), r.readsPerSec(), r.dbName)
}
