// Command fleetbench measures what N instances of a service cost one
// Redis node, as the node sees it: CPU, commands, bytes and connections
// from INFO, read before and after a window, never in the client.
//
// An instance is one pod: its own go-redis client (or rueidis client) and
// the system's cache on it. The systems: the repository hotkeygen
// generates for Item (item.go), rueidis's client-side cache (DoCache),
// go-redis's own client-side cache, and go-redis with no cache, the
// floor. The scenarios, each on a fresh fleet, measured for -window after
// -warmup:
//
//	idle-empty     the instances are connected and hold nothing
//	idle-holding   each first holds a local copy of item:1..10, then idles
//	writes-unheld  as idle-holding, and a writer SETs keys no instance
//	               holds (item:1000000 on) at -write-rate
//	writes-held    as idle-holding, and the writer SETs item:1..10 at
//	               -held-write-rate
//
// Usage, from the repository root:
//
//	cd bench/fleetbench && go run . [-n 1,8,32,128,256] [-systems hotkeygen,rueidis,csc,plain]
//	    [-scenarios idle-empty,idle-holding,writes-unheld,writes-held] [-window 10s] [-warmup 3s]
//	    [-mode inproc|procs] [-topology single|cluster] [-redis host:port] [-out results/latest]
//
// Without -redis it starts its own redis-server (or a cluster of three
// masters) on free loopback ports.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(1)
	}
}

// maxN bounds -n: every instance holds a few connections to each node
// and a few goroutines here.
const maxN = 4096

// run is the whole command, so a test can run it as a user would.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fleetbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr      = fs.String("redis", "", "address of the Redis to use (for -topology cluster, any node; every node is measured); empty starts one on a free loopback port")
		sysList   = fs.String("systems", defaultSystems, "systems to run, comma-separated: "+systemIDs())
		scList    = fs.String("scenarios", "idle-empty,idle-holding,writes-unheld,writes-held", "scenarios to run, comma-separated: "+scenarioIDs())
		nList     = fs.String("n", "1,8,32,128,256", "instance counts to run, comma-separated")
		window    = fs.Duration("window", 10*time.Second, "how long the node is measured for each run")
		warmup    = fs.Duration("warmup", 3*time.Second, "how long each fleet runs before the window opens")
		mode      = fs.String("mode", "inproc", "inproc: every instance in this process; procs: spread over child processes (see -procs)")
		procs     = fs.Int("procs", 8, "with -mode procs, at most this many child processes per fleet")
		topology  = fs.String("topology", "single", "single: one redis-server; cluster: a Redis Cluster (3 masters when fleetbench starts it)")
		writeRate = fs.Float64("write-rate", 2000, "writes/s of writes-unheld")
		heldRate  = fs.Float64("held-write-rate", 200, "writes/s of writes-held")
		payload   = fs.Int("payload", 100, "bytes of each written value's payload")
		out       = fs.String("out", "results/latest", "write the results to this prefix plus .md, .csv and .json, and the chart to fleet.svg beside them; empty writes none")
		isChild   = fs.Bool("child", false, "internal: run as one child process of -mode procs, driven on stdin")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every setting is a flag (-h lists them)", fs.Args())
	}
	raiseFileLimit(stderr)
	redis.SetLogger(quietLog{}) // go-redis logs each failed dial of each pool; the errors reach us anyway
	if *isChild {
		return runChild(ctx, fs, stdin, stdout)
	}

	sel, err := pickSystems(*sysList)
	if err != nil {
		return err
	}
	scs, err := pickScenarios(*scList)
	if err != nil {
		return err
	}
	ns, err := parseNs(*nList)
	if err != nil {
		return err
	}
	switch {
	case *mode != "inproc" && *mode != "procs":
		return fmt.Errorf("-mode %q: use inproc or procs", *mode)
	case *topology != "single" && *topology != "cluster":
		return fmt.Errorf("-topology %q: use single or cluster", *topology)
	case *window < time.Second || *warmup < 0:
		return errors.New("-window must be at least 1s (INFO's CPU figures tick in milliseconds), and -warmup not negative")
	case !(*writeRate > 0) || !(*heldRate > 0) || *writeRate > 1e6 || *heldRate > 1e6:
		return errors.New("-write-rate and -held-write-rate must be above 0 and at most 1000000 writes/s")
	case *procs < 1 || *procs > 256:
		return errors.New("-procs must be from 1 to 256")
	case *payload < 0 || *payload > 1<<20:
		return errors.New("-payload must be from 0 to 1048576 bytes")
	}
	if *warmup+*window > 45*time.Second && slices.ContainsFunc(sel, func(s systemInfo) bool { return strings.HasPrefix(s.ID, "hotkeygen") }) {
		fmt.Fprintf(stderr, "fleetbench: warning: -warmup + -window is %v; hotkeygen drops copies no longer read at its first demotion pass, 60s after an instance starts, so its idle copies may go inside the window (the copies column shows it)\n", *warmup+*window)
	}

	var t Target
	if *addr == "" {
		var stop func()
		if t, stop, err = launch(*topology == "cluster"); err != nil {
			return err
		}
		defer stop()
	} else if t, err = discover(ctx, *addr, *topology == "cluster"); err != nil {
		return err
	}

	cfg := Config{Window: *window, Warmup: *warmup, Mode: *mode, Procs: *procs, WriteRate: *writeRate, HeldWriteRate: *heldRate, Payload: *payload}
	b, err := NewBench(ctx, cfg, t, slices.Max(ns))
	if err != nil {
		return err
	}
	defer b.Close()
	meta := Meta{Started: time.Now(), Command: append([]string{"fleetbench"}, args...), GoVersion: goruntime.Version(),
		GOMAXPROCS: goruntime.GOMAXPROCS(0), NumCPU: goruntime.NumCPU(), Topology: t.Topology(), Nodes: t.Addrs, Config: cfg}
	meta.Redis, _ = b.nodes[0].Field(ctx, "server", "redis_version")
	fmt.Fprintf(stderr, "fleetbench: %s, GOMAXPROCS %d, Redis %s, %s at %s, mode %s, %v window after %v warm-up\n",
		meta.GoVersion, meta.GOMAXPROCS, meta.Redis, t.Topology(), strings.Join(t.Addrs, ","), cfg.Mode, cfg.Window, cfg.Warmup)

	var (
		results []*Result
		fails   int
	)
	for _, n := range ns {
		for _, sys := range sel {
			for _, sc := range scs {
				if err := ctx.Err(); err != nil {
					return err
				}
				start := time.Now()
				m, err := b.Run(ctx, sys, sc, n)
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					// One failed run (a crowded machine, a fleet too large
					// for it) leaves the others worth having: it becomes a
					// row saying why, and the run fails at the end.
					fmt.Fprintf(stderr, "fleetbench: %s, %s, N=%d failed: %v\n", sys.Name, sc.ID, n, err)
					results = append(results, failed(sys.Name, sc.ID, n, err))
					fails++
					continue
				}
				r := m.result()
				results = append(results, r)
				fmt.Fprintf(stderr, "fleetbench: %-14s %-13s N=%-4d %6.1f ms/s CPU, %s cmds/s per instance (%s), %d conns, %.1f→%.1f copies each (%.0fs)\n",
					sys.Name, sc.ID, n, r.CPUMsPerSec, rate(r.CmdsPerInstance), r.commandsText(), r.Conns, r.HeldStart, r.HeldEnd, time.Since(start).Seconds())
				if r.writerShort() {
					fmt.Fprintf(stderr, "fleetbench:   the writer reached %.0f of %.0f writes/s: the node or this machine ran out of CPU (Redis's main thread: %s ms/s); the per-write figures are at the lower rate\n",
						r.WritesPerSec, r.WritesAsked, optional(r.MainCPUMsPerSec, 0))
				}
				if r.WriterErrors > 0 {
					fmt.Fprintf(stderr, "fleetbench:   the writer had %d failed writes, the last: %s\n", r.WriterErrors, r.WriterLastError)
				}
			}
		}
	}
	netOfBaseline(results)
	PrintTable(stdout, results, t.Cluster)
	var failure error
	if fails > 0 {
		failure = fmt.Errorf("%d of %d runs failed; their rows say why", fails, len(results))
	}
	if *out == "" {
		return failure
	}
	if err := WriteFiles(*out, meta, results); err != nil {
		return err
	}
	svg := filepath.Join(filepath.Dir(*out), "fleet.svg")
	f, err := os.Create(svg)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("fleetbench: what N instances cost one Redis node (%s, %s, Redis %s)", t.Topology(), cfg.Mode, meta.Redis)
	if err := errors.Join(WriteChart(f, title, chartPanels(results, sel)), f.Close()); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fleetbench: wrote %[1]s.md, %[1]s.csv, %[1]s.json and %[2]s\n", *out, svg)
	return failure
}

// parseNs parses -n: instance counts from 1 to maxN, in the order given.
func parseNs(list string) ([]int, error) {
	var ns []int
	for s := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > maxN {
			return nil, fmt.Errorf("-n %q: give instance counts from 1 to %d, comma-separated", list, maxN)
		}
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	return ns, nil
}

// raiseFileLimit raises the soft limit on open files to the hard one:
// 256 instances in one process hold a connection or more each to every
// node, and a redis-server started here inherits the limit for its
// maxclients.
func raiseFileLimit(stderr io.Writer) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	if cur := lim.Cur; cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintf(stderr, "fleetbench: warning: cannot raise the open-file limit from %d: %v; large -n may run out (raise ulimit -n)\n", cur, err)
		}
	}
}

type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}
