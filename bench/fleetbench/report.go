package main

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is one fleet under one scenario, as the node saw it: summed over
// the nodes of a cluster, each of which is in Nodes.
type Result struct {
	System   string  `json:"system"`
	Scenario string  `json:"scenario"`
	N        int     `json:"n"`
	Seconds  float64 `json:"seconds"` // the window, as measured between the snapshots

	// CPUMsPerSec is the server's CPU time (user and system, every
	// thread) per second of window; MainCPUMsPerSec its main thread's,
	// where the server reports it.
	CPUMsPerSec     float64  `json:"cpu_ms_per_s"`
	MainCPUMsPerSec *float64 `json:"main_cpu_ms_per_s,omitempty"`

	// CmdsPerSec are the commands the fleet sent: every command the node
	// executed but the writer's SETs and fleetbench's own INFO.
	CmdsPerSec      float64       `json:"cmds_per_s"`
	CmdsPerInstance float64       `json:"cmds_per_s_per_instance"`
	TopCommands     []CommandRate `json:"top_commands"` // per instance

	// WritesPerSec are the writer's SETs the node executed, of
	// WritesAsked it was to send: fewer when the node, or this machine,
	// ran out of CPU.
	WritesPerSec float64 `json:"writes_per_s"`
	WritesAsked  float64 `json:"writes_asked_per_s,omitempty"`
	NetOutPerSec float64 `json:"net_out_bytes_per_s"`
	NetInPerSec  float64 `json:"net_in_bytes_per_s"`
	// The per-write figures of the write scenarios are net of the
	// baseline, the same system and N in idle-holding, when it ran; the
	// Raw ones are the whole window's divided by the writes.
	NetOutPerWrite    *float64 `json:"net_out_bytes_per_write,omitempty"`
	CPUUsPerWrite     *float64 `json:"cpu_us_per_write,omitempty"`
	NetOutPerWriteRaw *float64 `json:"net_out_bytes_per_write_raw,omitempty"`
	CPUUsPerWriteRaw  *float64 `json:"cpu_us_per_write_raw,omitempty"`

	// Conns are the connections the fleet held at the end of the window.
	Conns            int     `json:"conns"`
	ConnsPerInstance float64 `json:"conns_per_instance"`
	// HeldStart and HeldEnd are the copies each instance held, on
	// average, before the warm-up and after the window.
	HeldStart float64 `json:"held_start_per_instance"`
	HeldEnd   float64 `json:"held_end_per_instance"`

	// Error says why the run failed; a failed run has no figures.
	Error string `json:"error,omitempty"`

	WriterErrors    uint64 `json:"writer_errors,omitempty"`
	WriterLastError string `json:"writer_last_error,omitempty"`

	Nodes []NodeResult `json:"nodes"`
}

// CommandRate is one command's calls per second and instance.
type CommandRate struct {
	Command string  `json:"command"`
	PerSec  float64 `json:"per_s"`
}

// NodeResult is one node's share of a Result.
type NodeResult struct {
	Addr            string   `json:"addr"`
	CPUMsPerSec     float64  `json:"cpu_ms_per_s"`
	MainCPUMsPerSec *float64 `json:"main_cpu_ms_per_s,omitempty"`
	CmdsPerSec      float64  `json:"cmds_per_s"`
	WritesPerSec    float64  `json:"writes_per_s"`
	NetOutPerSec    float64  `json:"net_out_bytes_per_s"`
	Conns           int      `json:"conns"`
}

// writerCommand is the command of the writer's writes, which no system
// under test sends.
const writerCommand = "set"

// topCommands is how many commands a row names.
const topCommands = 4

// result turns a measurement into a Result; the per-write figures net of
// the baseline are set by netOfBaseline, once every run is done.
func (m *Measurement) result() *Result {
	r := &Result{System: m.System, Scenario: m.Scenario, N: m.N}
	calls := map[string]uint64{}
	var main float64
	hasMain := len(m.Deltas) > 0
	var secs float64
	for i, d := range m.Deltas {
		secs = max(secs, d.Seconds)
		s := max(d.Seconds, 1e-9)
		writes := d.Calls[writerCommand]
		fleet := d.Commands - min(d.Commands, writes+harnessInfos)
		nr := NodeResult{
			Addr:         d.Addr,
			CPUMsPerSec:  1000 * d.CPU / s,
			CmdsPerSec:   float64(fleet) / s,
			WritesPerSec: float64(writes) / s,
			NetOutPerSec: float64(d.NetOut) / s,
			Conns:        m.FleetConns[i],
		}
		if d.HasMain {
			v := 1000 * d.MainCPU / s
			nr.MainCPUMsPerSec = &v
			main += v
		}
		hasMain = hasMain && d.HasMain
		r.Nodes = append(r.Nodes, nr)
		r.CPUMsPerSec += nr.CPUMsPerSec
		r.CmdsPerSec += nr.CmdsPerSec
		r.WritesPerSec += nr.WritesPerSec
		r.NetOutPerSec += nr.NetOutPerSec
		r.NetInPerSec += float64(d.NetIn) / s
		r.Conns += nr.Conns
		for cmd, n := range d.Calls {
			switch cmd {
			case writerCommand:
				continue
			case "info":
				n -= min(n, harnessInfos)
			}
			calls[cmd] += n
		}
	}
	r.Seconds = secs
	if hasMain {
		r.MainCPUMsPerSec = &main
	}
	n := float64(max(m.N, 1))
	r.CmdsPerInstance = r.CmdsPerSec / n
	r.ConnsPerInstance = float64(r.Conns) / n
	r.HeldStart, r.HeldEnd = float64(m.HeldStart)/n, float64(m.HeldEnd)/n
	r.WritesAsked = m.WritesAsked
	r.WriterErrors, r.WriterLastError = m.WriterErrors, m.WriterLastError
	for cmd, c := range calls {
		if rate := float64(c) / max(secs, 1e-9) / n; rate >= 0.05 {
			r.TopCommands = append(r.TopCommands, CommandRate{strings.ToUpper(cmd), rate})
		}
	}
	slices.SortFunc(r.TopCommands, func(a, b CommandRate) int {
		return cmp.Or(cmp.Compare(b.PerSec, a.PerSec), cmp.Compare(a.Command, b.Command))
	})
	if r.WritesPerSec > 0 {
		out, cpu := r.NetOutPerSec/r.WritesPerSec, 1000*r.CPUMsPerSec/r.WritesPerSec
		r.NetOutPerWriteRaw, r.CPUUsPerWriteRaw = &out, &cpu
	}
	return r
}

// writerShort reports whether the writer sent under 90% of its rate.
func (r *Result) writerShort() bool { return r.WritesAsked > 0 && r.WritesPerSec < 0.9*r.WritesAsked }

// netOfBaseline sets the per-write figures of each write scenario's
// result to what the writes added to the baseline of the same system and
// N: CPU µs and output bytes per write.
func netOfBaseline(rs []*Result) {
	for _, r := range rs {
		if r.WritesPerSec <= 0 {
			continue
		}
		i := slices.IndexFunc(rs, func(b *Result) bool {
			return b.Scenario == baselineScenario && b.System == r.System && b.N == r.N && b.Error == ""
		})
		if i < 0 {
			continue
		}
		b := rs[i]
		cpu := 1000 * (r.CPUMsPerSec - b.CPUMsPerSec) / r.WritesPerSec
		out := (r.NetOutPerSec - b.NetOutPerSec) / r.WritesPerSec
		r.CPUUsPerWrite, r.NetOutPerWrite = &cpu, &out
	}
}

// Meta describes the run, for the JSON and the Markdown.
type Meta struct {
	Started    time.Time `json:"started"`
	Command    []string  `json:"command"`
	GoVersion  string    `json:"go_version"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	NumCPU     int       `json:"num_cpu"`
	Redis      string    `json:"redis_version"`
	Topology   string    `json:"topology"`
	Nodes      []string  `json:"nodes"`
	Config     Config    `json:"config"`
}

func (r *Result) commandsText() string {
	var parts []string
	for _, c := range r.TopCommands[:min(topCommands, len(r.TopCommands))] {
		parts = append(parts, c.Command+" "+rate(c.PerSec)+"/s")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// failed is the Result of a run that failed: the first line of its
// error, short enough for a table cell.
func failed(sys, scenario string, n int, err error) *Result {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if r := []rune(msg); len(r) > 160 {
		msg = string(r[:160]) + "…"
	}
	return &Result{System: sys, Scenario: scenario, N: n, Error: msg}
}

// rate writes a per-second figure with as many digits as it deserves.
func rate(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func optional(v *float64, digits int) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

// PrintTable writes the results as a Markdown table, and for a cluster a
// second one per node.
func PrintTable(w io.Writer, rs []*Result, cluster bool) {
	fmt.Fprintln(w, "| system | scenario | N | Redis CPU ms/s | main thread ms/s | cmds/s per instance | top commands, per instance | writes/s | out B/write | CPU µs/write | conns (per instance) | copies per instance, start → end |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
	for _, r := range rs {
		if r.Error != "" {
			fmt.Fprintf(w, "| %s | %s | %d | failed: %s |%s\n", r.System, r.Scenario, r.N, cell(r.Error), strings.Repeat(" – |", 8))
			continue
		}
		writes, out, cpu := "–", "–", "–"
		if r.WritesPerSec > 0 {
			writes = strconv.FormatFloat(r.WritesPerSec, 'f', 0, 64)
			if r.writerShort() {
				writes += " of " + strconv.FormatFloat(r.WritesAsked, 'f', 0, 64)
			}
			out, cpu = optional(r.NetOutPerWrite, 0), optional(r.CPUUsPerWrite, 1)
			if r.CPUUsPerWrite == nil { // no baseline ran: the raw figures, marked
				out, cpu = optional(r.NetOutPerWriteRaw, 0)+"*", optional(r.CPUUsPerWriteRaw, 1)+"*"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.1f | %s | %s | %s | %s | %s | %s | %d (%.1f) | %.1f → %.1f |\n",
			r.System, r.Scenario, r.N, r.CPUMsPerSec, optional(r.MainCPUMsPerSec, 1), rate(r.CmdsPerInstance),
			cell(r.commandsText()), writes, out, cpu, r.Conns, r.ConnsPerInstance, r.HeldStart, r.HeldEnd)
	}
	if !cluster {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| system | scenario | N | node | Redis CPU ms/s | main thread ms/s | cmds/s | writes/s | out KB/s | conns |")
	fmt.Fprintln(w, "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rs {
		for _, n := range r.Nodes { // a failed run has none
			fmt.Fprintf(w, "| %s | %s | %d | %s | %.1f | %s | %s | %.0f | %.1f | %d |\n",
				r.System, r.Scenario, r.N, n.Addr, n.CPUMsPerSec, optional(n.MainCPUMsPerSec, 1), rate(n.CmdsPerSec), n.WritesPerSec, n.NetOutPerSec/1000, n.Conns)
		}
	}
}

// cell escapes the pipes of a Markdown table cell: subcommands are
// named "CLUSTER|SHARDS".
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// notes explains the columns, under the table in the Markdown file.
const notes = `- Every figure is read at the node, from INFO before and after the window, never in the client.
- Redis CPU is used_cpu_sys + used_cpu_user per second of window (summed over a cluster's nodes); the main thread's is where the server reports it.
- cmds/s per instance counts every command the node executed but the writer's SETs and fleetbench's one INFO per node and window; the top commands are per instance too.
- out B/write and CPU µs/write are net of idle-holding of the same system and N (marked * where that did not run, and then raw); they include the writer's own SET.
- conns are the node's connected_clients at the end of the window less its count before the fleet started.
- writes/s are the writer's SETs the node executed; "252 of 2000" means the writer fell short of its rate, the node or this machine being out of CPU, and the per-write figures are at the lower rate.
- copies per instance are the local copies of the 10 held keys each instance held after holding them and after the window: for hotkeygen the values in its local store (Stats().LocalSize), which keeps a copy an invalidation made unverified (it is not served while Redis answers, and the next read or refresh asks Redis); for rueidis the keys a DoCache after the window found cached; for go-redis CSC its cache's entries. rueidis and go-redis CSC drop a copy on invalidation and fetch it again only when it is read, which no instance does in the window.
`

// WriteFiles writes prefix.csv, prefix.json and prefix.md, creating the
// directory.
func WriteFiles(prefix string, meta Meta, rs []*Result) error {
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return err
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# fleetbench\n\n`%s`, %s, %s, GOMAXPROCS %d of %d CPUs, Redis %s, %s topology (%s), mode %s, window %v after %v of warm-up.\n\n",
		strings.Join(meta.Command, " "), meta.Started.Format(time.RFC3339), meta.GoVersion, meta.GOMAXPROCS, meta.NumCPU, meta.Redis,
		meta.Topology, strings.Join(meta.Nodes, ", "), meta.Config.Mode, meta.Config.Window, meta.Config.Warmup)
	PrintTable(&md, rs, meta.Topology == "cluster")
	fmt.Fprintf(&md, "\n%s", notes)
	if err := os.WriteFile(prefix+".md", md.Bytes(), 0o644); err != nil {
		return err
	}
	js, err := json.MarshalIndent(struct {
		Meta    Meta      `json:"meta"`
		Results []*Result `json:"results"`
	}{meta, rs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".json", append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(prefix+".csv", csvOf(rs), 0o644)
}

func csvOf(rs []*Result) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"system", "scenario", "n", "seconds", "cpu_ms_per_s", "main_cpu_ms_per_s", "cmds_per_s", "cmds_per_s_per_instance", "top_commands_per_instance",
		"writes_per_s", "writes_asked_per_s", "net_out_bytes_per_s", "net_in_bytes_per_s", "net_out_bytes_per_write", "cpu_us_per_write", "net_out_bytes_per_write_raw", "cpu_us_per_write_raw",
		"conns", "conns_per_instance", "held_start_per_instance", "held_end_per_instance", "writer_errors", "error"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	for _, r := range rs {
		w.Write([]string{r.System, r.Scenario, strconv.Itoa(r.N), f(r.Seconds), f(r.CPUMsPerSec), opt(r.MainCPUMsPerSec), f(r.CmdsPerSec), f(r.CmdsPerInstance), r.commandsText(),
			f(r.WritesPerSec), f(r.WritesAsked), f(r.NetOutPerSec), f(r.NetInPerSec), opt(r.NetOutPerWrite), opt(r.CPUUsPerWrite), opt(r.NetOutPerWriteRaw), opt(r.CPUUsPerWriteRaw),
			strconv.Itoa(r.Conns), f(r.ConnsPerInstance), f(r.HeldStart), f(r.HeldEnd), strconv.FormatUint(r.WriterErrors, 10), r.Error})
	}
	w.Flush()
	return buf.Bytes()
}
