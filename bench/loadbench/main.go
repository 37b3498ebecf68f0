// Command loadbench drives the same workloads through hotkeygen and its
// peers against a real redis-server, and prints one table of throughput,
// latency, Redis load, memory and stale reads.
//
// The peers: plain go-redis (no local cache), github.com/go-redis/cache
// with its TinyLFU local cache, go-redis's own client-side cache (RESP3
// and CLIENT TRACKING), and rueidis's client-side cache (DoCache). Every
// local cache gets the same entry
// budget (-local), and every system reads and writes the same msgpack
// bytes of Item under the same keys.
//
// The workloads: (a) YCSB-style Zipfian reads (theta 0.99), (b) the same
// with 1% writes, (c) a flash crowd, where every 10 s a new handful of
// keys takes half of all reads.
//
// Usage, from the repository root: make loadbench, or
//
//	cd bench/loadbench && go run -tags hotkeygen_bench . [-duration 20s] [-systems redis,cache,csc,rueidis,hotkeygen] [-workloads zipf,writes,flash] [-out results/latest]
//
// Without -redis it starts its own redis-server on a free loopback port.
// Without the hotkeygen_bench tag it lacks hotkeygen (pipeline), the
// runtime's reference built only with that tag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// run is the whole command, so the smoke test can run it as a user would.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr       = fs.String("redis", "", "address of the Redis to use; empty starts a redis-server on a free loopback port")
		duration   = fs.Duration("duration", 0, "how long each system runs each workload; 0 means 20s for zipf and writes, 35s for flash")
		workers    = fs.Int("workers", 4*goruntime.GOMAXPROCS(0), "concurrent goroutines reading and writing")
		sysList    = fs.String("systems", systemIDs(","), "systems to run, comma-separated: "+systemIDs(", "))
		wlList     = fs.String("workloads", "zipf,writes,flash", "workloads to run, comma-separated: zipf, writes, flash")
		keys       = fs.Int64("keys", 100_000, "number of keys")
		theta      = fs.Float64("theta", 0.99, "Zipfian constant, between 0 and 1")
		local      = fs.Int("local", 200, "local cache entries every cache may hold")
		rounds     = fs.Int("rounds", 1, "run every system this many times per workload, taking turns, and add the rounds up: the machine's drift then hits every system alike")
		seed       = fs.Uint64("seed", 1, "seed of every random choice")
		payload    = fs.Int("payload", 100, "bytes of each value's payload")
		writes     = fs.Float64("writes", 0.01, "fraction of operations that write, in the writes workload")
		crowdEvery = fs.Duration("crowd-every", 10*time.Second, "how long each flash crowd lasts before the next")
		crowdSize  = fs.Int("crowd-keys", 5, "keys in each flash crowd")
		crowdShare = fs.Float64("crowd-share", 0.5, "share of reads going to the current flash crowd")
		staleBound = fs.Duration("stale-bound", 50*time.Millisecond, "staleness tolerated of a system with invalidation; longer stale reads are counted apart")
		out        = fs.String("out", "results/latest", "write the results to this prefix plus .csv, .json and .md; empty writes none")
		cpuprofile = fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	sel, err := pickSystems(*sysList)
	if err != nil {
		return err
	}
	wls, err := pickWorkloads(*wlList, *duration, *writes, &FlashCrowd{Every: *crowdEvery, Size: *crowdSize, Share: *crowdShare, Keys: *keys, Seed: *seed})
	if err != nil {
		return err
	}
	if *keys < 10 || *local < 1 || *workers < 1 || *rounds < 1 || int64(*crowdSize) > *keys/2 {
		return errors.New("need -keys of at least 10, -local, -workers and -rounds of at least 1, and -crowd-keys at most half of -keys")
	}

	if *addr == "" {
		srv, err := redistest.Launch()
		if err != nil {
			return err
		}
		defer srv.Stop()
		*addr = srv.Addr
	}
	cfg := Config{Addr: *addr, Keys: *keys, Theta: *theta, Local: *local, Workers: *workers, Seed: *seed, Payload: *payload, StaleBound: *staleBound}
	b, err := NewBench(ctx, cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	meta := Meta{Started: time.Now(), Command: append([]string{"loadbench"}, args...), GoVersion: goruntime.Version(), GOMAXPROCS: goruntime.GOMAXPROCS(0), Config: cfg}
	meta.Redis, _ = redisVersion(ctx, b)
	fmt.Fprintf(stderr, "loadbench: %s, GOMAXPROCS %d, redis %s at %s, %d keys, %d workers, %d local entries\n",
		meta.GoVersion, meta.GOMAXPROCS, meta.Redis, cfg.Addr, cfg.Keys, cfg.Workers, cfg.Local)

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	var results []*Result
	for _, w := range wls {
		samples := make([]*sample, len(sel))
		for round := range *rounds {
			for i, si := range sel {
				if err := ctx.Err(); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "loadbench: %s through %s for %v (round %d of %d)\n", w.Name, si.Name, w.Duration, round+1, *rounds)
				s, err := b.Run(ctx, si, w, round)
				if err != nil {
					return err
				}
				r := s.result(si.Name, w.Name, 1, cfg.StaleBound)
				fmt.Fprintf(stderr, "loadbench:   %.0f reads/s, p99 %.0f µs, %.0f commands per 1k reads, %.1f%% local, %d stale\n",
					r.ReadsPerSec, r.P99Us, r.CmdsPer1kReads, 100*r.LocalShare, r.StaleReads)
				if samples[i] == nil {
					samples[i] = s
				} else {
					samples[i].add(s)
				}
			}
		}
		for i, si := range sel {
			results = append(results, samples[i].result(si.Name, w.Name, *rounds, cfg.StaleBound))
		}
	}
	PrintTable(stdout, results)
	if *out != "" {
		if err := WriteFiles(*out, meta, results); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "loadbench: wrote %[1]s.csv, %[1]s.json and %[1]s.md\n", *out)
	}
	return nil
}

func systemIDs(sep string) string {
	var ids []string
	for _, s := range systems {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, sep)
}

func pickSystems(list string) ([]systemInfo, error) {
	var out []systemInfo
	for id := range strings.SplitSeq(list, ",") {
		i := slices.IndexFunc(systems, func(s systemInfo) bool { return s.ID == strings.TrimSpace(id) })
		if i < 0 {
			return nil, fmt.Errorf("unknown system %q; the systems are %s", id, systemIDs(", "))
		}
		out = append(out, systems[i])
	}
	return out, nil
}

// pickWorkloads builds the workloads named in list; a duration of 0 keeps
// each one's default.
func pickWorkloads(list string, d time.Duration, writes float64, crowd *FlashCrowd) ([]*Workload, error) {
	all := []*Workload{
		{ID: "zipf", Name: "(a) zipf reads", Duration: 20 * time.Second},
		{ID: "writes", Name: "(b) zipf, 1% writes", Duration: 20 * time.Second, Writes: writes},
		// Three and a half crowds: three changes, the last crowd measured
		// for half a period.
		{ID: "flash", Name: "(c) flash crowd", Duration: 35 * time.Second, Crowd: crowd},
	}
	if writes != 0.01 {
		all[1].Name = fmt.Sprintf("(b) zipf, %g%% writes", 100*writes)
	}
	var out []*Workload
	for id := range strings.SplitSeq(list, ",") {
		i := slices.IndexFunc(all, func(w *Workload) bool { return w.ID == strings.TrimSpace(id) })
		if i < 0 {
			return nil, fmt.Errorf("unknown workload %q; the workloads are zipf, writes, flash", id)
		}
		w := *all[i]
		if d > 0 {
			w.Duration = d
		}
		out = append(out, &w)
	}
	return out, nil
}

func redisVersion(ctx context.Context, b *Bench) (string, error) {
	info, err := b.admin.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", nil
}
