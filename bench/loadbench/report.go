package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"
)

// Result is one system under one workload.
type Result struct {
	System    string  `json:"system"`
	Workload  string  `json:"workload"`
	Rounds    int     `json:"rounds"`
	Seconds   float64 `json:"seconds"` // summed over the rounds
	Reads     uint64  `json:"reads"`
	Writes    uint64  `json:"writes"`
	Errors    uint64  `json:"errors"`
	LastError string  `json:"last_error,omitempty"`

	ReadsPerSec float64 `json:"reads_per_sec"`
	P50Us       float64 `json:"p50_us"`
	P99Us       float64 `json:"p99_us"`
	P999Us      float64 `json:"p999_us"`

	// RedisCommands are the commands Redis executed for the system (INFO
	// commandstats, without the harness's INFO and CONFIG), reads and
	// writes and background work alike.
	RedisCommands  uint64            `json:"redis_commands"`
	CmdsPer1kReads float64           `json:"cmds_per_1k_reads"`
	Commands       map[string]uint64 `json:"commands"`
	// RedisReads are the keys of the GETs and MGETs the system's clients
	// sent; LocalShare is the share of reads that did not need one.
	RedisReads uint64  `json:"redis_reads"`
	LocalShare float64 `json:"local_share"`
	// HottestAtRedis is the key Redis was asked for most, and its rate
	// over the run.
	HottestAtRedis       string  `json:"hottest_at_redis"`
	HottestAtRedisPerSec float64 `json:"hottest_at_redis_per_sec"`
	// HottestOffered is the key the workers read most; HottestOfferedAtRedis
	// is the share of its reads that reached Redis.
	HottestOffered        string  `json:"hottest_offered"`
	HottestOfferedPerSec  float64 `json:"hottest_offered_per_sec"`
	HottestOfferedAtRedis float64 `json:"hottest_offered_at_redis"`

	// HeapBytes is the Go heap the system held at the end of the run (its
	// caches, connections and bookkeeping): HeapAlloc after GC with the
	// system open, less HeapAlloc after GC once it is closed and dropped;
	// the largest of the rounds.
	HeapBytes int64 `json:"heap_bytes"`

	// StaleReads returned a version older than one acknowledged before
	// the read began; StaleBeyondBound were stale for longer than
	// StaleBoundMs; LongestStaleMs is the longest such age.
	StaleReads       uint64  `json:"stale_reads"`
	StaleFraction    float64 `json:"stale_fraction"`
	StaleBeyondBound uint64  `json:"stale_beyond_bound"`
	StaleBoundMs     float64 `json:"stale_bound_ms"`
	LongestStaleMs   float64 `json:"longest_stale_ms"`

	// Crowd follows each flash-crowd key of each round (hotkeygen only);
	// DetectMs is the latest first local hit among them and DemoteMs the
	// latest demotion.
	Crowd    []CrowdKey `json:"crowd,omitempty"`
	DetectMs *float64   `json:"detect_ms,omitempty"`
	DemoteMs *float64   `json:"demote_ms,omitempty"`

	Extras map[string]float64 `json:"extras,omitempty"`
	// Timeline holds, per round, the reads completed in each 100 ms.
	Timeline [][]uint64 `json:"reads_per_100ms"`
}

// result turns the rounds' figures into the table's.
func (s *sample) result(system, workload string, rounds int, bound time.Duration) *Result {
	secs := s.elapsed.Seconds()
	r := &Result{
		System: system, Workload: workload, Rounds: rounds, Seconds: secs,
		Reads: s.reads, Writes: s.writes, Errors: s.errors,
		ReadsPerSec: float64(s.reads) / secs,
		P50Us:       float64(s.hist.ValueAtQuantile(50)) / 1e3,
		P99Us:       float64(s.hist.ValueAtQuantile(99)) / 1e3,
		P999Us:      float64(s.hist.ValueAtQuantile(99.9)) / 1e3,
		Commands:    s.calls,
		HeapBytes:   s.heap,
		StaleReads:  s.stale, StaleBeyondBound: s.beyond, StaleBoundMs: ms(bound), LongestStaleMs: ms(s.longest),
		Crowd: s.crowd, Extras: s.extras, Timeline: s.timeline,
	}
	if s.lastErr != nil {
		r.LastError = s.lastErr.Error()
	}
	for _, n := range s.calls {
		r.RedisCommands += n
	}
	r.CmdsPer1kReads = perThousand(r.RedisCommands, r.Reads)
	if r.Reads > 0 {
		r.StaleFraction = float64(r.StaleReads) / float64(r.Reads)
	}

	top, hot := 0, 0
	for id, n := range s.atRedis {
		r.RedisReads += n
		if n > s.atRedis[top] {
			top = id
		}
		if s.offered[id] > s.offered[hot] {
			hot = id
		}
	}
	if r.Reads > 0 {
		r.LocalShare = 1 - float64(r.RedisReads)/float64(r.Reads)
	}
	r.HottestAtRedis = ItemKey(int64(top))
	r.HottestAtRedisPerSec = float64(s.atRedis[top]) / secs
	r.HottestOffered = ItemKey(int64(hot))
	r.HottestOfferedPerSec = float64(s.offered[hot]) / secs
	if s.offered[hot] > 0 {
		r.HottestOfferedAtRedis = float64(s.atRedis[hot]) / float64(s.offered[hot])
	}

	if r.Crowd != nil {
		detect, demote := -1.0, -1.0
		for _, k := range r.Crowd {
			detect = max(detect, k.FirstHitMs)
			demote = max(demote, k.DemotedMs)
		}
		r.DetectMs, r.DemoteMs = &detect, &demote
	}
	return r
}

func perThousand(n, of uint64) float64 {
	if of == 0 {
		return 0
	}
	return 1000 * float64(n) / float64(of)
}

// columns are the table's, in order, for the terminal, CSV and Markdown.
var columns = []struct {
	head string
	cell func(*Result) string
}{
	{"workload", func(r *Result) string { return r.Workload }},
	{"system", func(r *Result) string { return r.System }},
	{"reads/s", func(r *Result) string { return fmt.Sprintf("%.0f", r.ReadsPerSec) }},
	{"p50 µs", func(r *Result) string { return fmt.Sprintf("%.1f", r.P50Us) }},
	{"p99 µs", func(r *Result) string { return fmt.Sprintf("%.0f", r.P99Us) }},
	{"p99.9 µs", func(r *Result) string { return fmt.Sprintf("%.0f", r.P999Us) }},
	{"cmds/1k reads", func(r *Result) string { return fmt.Sprintf("%.0f", r.CmdsPer1kReads) }},
	{"local %", func(r *Result) string { return fmt.Sprintf("%.1f", 100*r.LocalShare) }},
	{"hottest key at Redis /s", func(r *Result) string { return fmt.Sprintf("%.0f", r.HottestAtRedisPerSec) }},
	{"hottest offered key at Redis %", func(r *Result) string { return fmt.Sprintf("%.2f", 100*r.HottestOfferedAtRedis) }},
	{"heap MiB", func(r *Result) string { return fmt.Sprintf("%.1f", float64(r.HeapBytes)/(1<<20)) }},
	{"stale reads", func(r *Result) string { return fmt.Sprintf("%d (%.3f%%)", r.StaleReads, 100*r.StaleFraction) }},
	{"stale > bound", func(r *Result) string { return strconv.FormatUint(r.StaleBeyondBound, 10) }},
	{"longest stale ms", func(r *Result) string { return fmt.Sprintf("%.1f", r.LongestStaleMs) }},
	{"errors", func(r *Result) string { return strconv.FormatUint(r.Errors, 10) }},
}

// PrintTable writes the results as an aligned table, then what hotkeygen
// did with each flash crowd.
func PrintTable(w io.Writer, rs []*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for i, c := range columns {
		fmt.Fprint(tw, c.head, sep(i))
	}
	for _, r := range rs {
		for i, c := range columns {
			fmt.Fprint(tw, c.cell(r), sep(i))
		}
	}
	tw.Flush()
	for _, r := range rs {
		if r.Crowd == nil {
			continue
		}
		demote := "no crowd was demoted within the run"
		if *r.DemoteMs >= 0 {
			demote = fmt.Sprintf("demotion within %.1f s of cooling", *r.DemoteMs/1000)
		}
		fmt.Fprintf(w, "\n%s, %s: first local hit within %.0f ms of a crowd starting, %s (-1: not seen within the run)\n",
			r.System, r.Workload, *r.DetectMs, demote)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "round\tphase\tkey\tpromoted ms\tfirst hit ≤ ms\tdemoted ms\toffered\tat Redis\t\n")
		for _, k := range r.Crowd {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%.0f\t%.0f\t%.0f\t%d\t%d\t\n", k.Round, k.Phase, k.Key, k.PromotedMs, k.FirstHitMs, k.DemotedMs, k.Offered, k.AtRedis)
		}
		tw.Flush()
	}
}

func sep(i int) string {
	if i == len(columns)-1 {
		return "\t\n"
	}
	return "\t"
}

// Markdown writes the table as Markdown, for BENCHMARKS.md.
func Markdown(w io.Writer, rs []*Result) {
	row := func(cell func(int) string) {
		fmt.Fprint(w, "|")
		for i := range columns {
			fmt.Fprintf(w, " %s |", cell(i))
		}
		fmt.Fprintln(w)
	}
	row(func(i int) string { return columns[i].head })
	row(func(i int) string {
		if i < 2 {
			return "---"
		}
		return "---:"
	})
	for _, r := range rs {
		row(func(i int) string { return columns[i].cell(r) })
	}
}

// Meta describes the run, for the JSON output.
type Meta struct {
	Started    time.Time `json:"started"`
	Command    []string  `json:"command"`
	GoVersion  string    `json:"go_version"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	Redis      string    `json:"redis_version"`
	Config     Config    `json:"config"`
}

// jsonLines encodes {"meta": meta, "results": rs} with the meta and each
// result on a line of its own: a result's timeline holds thousands of
// numbers, which indented JSON would put one to a line.
func jsonLines(meta Meta, rs []*Result) ([]byte, error) {
	var b bytes.Buffer
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	b.WriteString("{\"meta\": ")
	b.Write(m)
	b.WriteString(",\n\"results\": [")
	for i, r := range rs {
		j, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n")
		b.Write(j)
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}

// WriteFiles writes prefix.csv (the table's figures, unformatted),
// prefix.json (everything) and prefix.md (the table, as Markdown).
func WriteFiles(prefix string, meta Meta, rs []*Result) error {
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return err
	}
	js, err := jsonLines(meta, rs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".json", js, 0o644); err != nil {
		return err
	}
	var md bytes.Buffer
	Markdown(&md, rs)
	if err := os.WriteFile(prefix+".md", md.Bytes(), 0o644); err != nil {
		return err
	}
	f, err := os.Create(prefix + ".csv")
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write([]string{"workload", "system", "seconds", "reads", "writes", "errors", "reads_per_sec", "p50_us", "p99_us", "p999_us",
		"redis_commands", "cmds_per_1k_reads", "redis_reads", "local_share", "hottest_at_redis", "hottest_at_redis_per_sec",
		"hottest_offered", "hottest_offered_per_sec", "hottest_offered_at_redis", "heap_bytes",
		"stale_reads", "stale_fraction", "stale_beyond_bound", "stale_bound_ms", "longest_stale_ms", "detect_ms", "demote_ms"})
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	u := func(x uint64) string { return strconv.FormatUint(x, 10) }
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return g(*p)
	}
	for _, r := range rs {
		cw.Write([]string{r.Workload, r.System, g(r.Seconds), u(r.Reads), u(r.Writes), u(r.Errors), g(r.ReadsPerSec), g(r.P50Us), g(r.P99Us), g(r.P999Us),
			u(r.RedisCommands), g(r.CmdsPer1kReads), u(r.RedisReads), g(r.LocalShare), r.HottestAtRedis, g(r.HottestAtRedisPerSec),
			r.HottestOffered, g(r.HottestOfferedPerSec), g(r.HottestOfferedAtRedis), strconv.FormatInt(r.HeapBytes, 10),
			u(r.StaleReads), g(r.StaleFraction), u(r.StaleBeyondBound), g(r.StaleBoundMs), g(r.LongestStaleMs), opt(r.DetectMs), opt(r.DemoteMs)})
	}
	cw.Flush()
	return errors.Join(cw.Error(), f.Close())
}
