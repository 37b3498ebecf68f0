// Command soak runs the fault-injection history checker (internal/testing/soak)
// for every invalidation mode, with paced and with saturating readers,
// then through the quiet failures (paced), then over a master and replica
// switched by FAILOVER, over Sentinel and over a cluster, and prints a
// table per mode and fault. make soak SOAK=10m runs it; -only runs one of
// the four setups.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/soak"
	"github.com/hotkeygen/hotkeygen/runtime"
)

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

func main() {
	total := flag.Duration("duration", 3*time.Minute, "the whole soak, shared by every run (a run lasts at least what its faults need)")
	keys := flag.Int("keys", 16, "hot keys")
	hash := flag.Bool("hash", false, "check collections in a Redis hash (layout=hash) instead of users, in every mode of the server setup but the quiet failures'")
	only := flag.String("only", "", "run one setup: server (every mode, paced and saturating, then the quiet failures paced), replica (FAILOVER), sentinel or cluster; empty runs all four")
	faults := flag.String("faults", "", "comma-separated fault names (of soak.Faults and soak.QuietFaults): run them alone against the server, paced, in every mode, and no other setup")
	modeList := flag.String("modes", "", "comma-separated invalidation modes to run (tracking, pubsub, pubsub-keys, off); empty runs each mode a setup has")
	database := flag.Bool("database", false, "back the records with a database that every write updates before it deletes or sets the key, and that loads read slowly (not with -hash)")
	flag.Parse()
	redis.SetLogger(discard{}) // killing Redis on purpose fills the log with dial errors
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	modes := []string{runtime.InvalidateTracking, runtime.InvalidatePubSub, runtime.InvalidatePubSubKeys, runtime.InvalidateOff}
	var runs []soak.Config
	if *faults != "" {
		chosen, err := soak.FaultsNamed(strings.Split(*faults, ","))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, mode := range modes {
			runs = append(runs, soak.Config{Mode: mode, Faults: chosen})
		}
		*only = "faults"
	} else if *only == "" || *only == "server" {
		for _, sat := range []bool{false, true} {
			for _, mode := range modes {
				runs = append(runs, soak.Config{Mode: mode, Saturating: sat, Faults: soak.Faults, Hash: *hash})
			}
		}
		for _, mode := range modes {
			runs = append(runs, soak.Config{Mode: mode, Faults: soak.QuietFaults})
		}
	}
	if *only == "" || *only == "replica" {
		runs = append(runs, soak.Config{Mode: runtime.InvalidateTracking, Faults: soak.ReplicaFaults, Replica: true})
	}
	// Sentinel and cluster: failovers, and a master killed.
	if *only == "" || *only == "sentinel" {
		for _, mode := range []string{runtime.InvalidateTracking, runtime.InvalidatePubSubKeys} {
			runs = append(runs, soak.Config{Mode: mode, Faults: soak.SentinelFaults, Sentinel: true})
		}
	}
	if *only == "" || *only == "cluster" {
		for _, mode := range []string{runtime.InvalidateTracking, runtime.InvalidatePubSubKeys} {
			runs = append(runs, soak.Config{Mode: mode, Faults: soak.ClusterFaults, Cluster: true})
		}
	}
	if *database {
		if *hash {
			fmt.Fprintln(os.Stderr, "soak: -database checks records, not collections: drop -hash")
			os.Exit(2)
		}
		// A key's TTL running out is no row's end when a database is
		// behind it: the checker's rule for that fault (no read of the
		// expired version) does not hold, and the fault is left out.
		for i := range runs {
			runs[i].Database = true
			runs[i].Faults = slices.DeleteFunc(slices.Clone(runs[i].Faults), func(f soak.Fault) bool { return f.Name == "TTL expiry" })
		}
	}
	if *modeList != "" {
		want := strings.Split(*modeList, ",")
		runs = slices.DeleteFunc(runs, func(c soak.Config) bool { return !slices.Contains(want, c.Mode) })
	}
	if len(runs) == 0 {
		fmt.Fprintf(os.Stderr, "soak: -only %q -modes %q: no run; want server, replica, sentinel or cluster, and modes one of them has\n", *only, *modeList)
		os.Exit(2)
	}
	var results []*soak.Result
	failed := false
	for _, cfg := range runs {
		cfg.Duration, cfg.Instances, cfg.Keys = max(*total/time.Duration(len(runs)), soak.MinDuration(cfg.Faults)), 3, *keys
		res, err := soak.Run(ctx, cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		results = append(results, res)
		if cfg.Saturating {
			continue
		}
		if r := res.Total; len(r.BeyondBound) > 0 || len(r.OwnWrites) > 0 {
			failed = true
			fmt.Fprint(os.Stderr, r.Summary(5), res.Trail)
		}
		for _, p := range res.Phases {
			for _, problem := range append(p.Problems(), soak.TooSlow(&p.Report)...) {
				failed = true
				fmt.Fprintf(os.Stderr, "soak: %s, %s: %s\n", cfg.Mode, p.Fault.Name, problem)
			}
		}
	}
	soak.Table(os.Stdout, results)
	fmt.Println()
	soak.OutageTable(os.Stdout, results)
	if failed {
		fmt.Fprintln(os.Stderr, "soak: paced readers saw a promise broken (above)")
		os.Exit(1)
	}
}
