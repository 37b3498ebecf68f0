package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/aggregate"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// rediscoverEvery paces the SCAN for entities when -entity is not given:
// SCAN walks the whole keyspace, too much to do every second on a large
// Redis, and entities come and go rarely.
const rediscoverEvery = time.Minute

const topUsage = "usage: hotkeygen top [-redis addr] [-entity name] [-every 1s] [-n 20] [-window 10s] [-once]"

// topMain runs `hotkeygen top` as the process: until Ctrl-C, with go-redis's
// own log, which would scribble over the table, silenced (top reports
// Redis errors itself).
func topMain(args []string) int {
	redis.SetLogger(quietRedis{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return top(ctx, args, os.Stdout, os.Stderr, time.Now)
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// top is `hotkeygen top`: a table of the keys hottest across every
// replica, from the sets repositories with aggregate=on report to. It
// redraws the table every -every until ctx ends, or prints it once with
// -once, and returns the exit status.
func top(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("hotkeygen top", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("redis", defaultRedisAddr(), "Redis address; a comma-separated list of addresses is a cluster (end a single one with a comma)")
	entity := fs.String("entity", "", "show only this entity's keys")
	every := fs.Duration("every", time.Second, "how often to redraw the table")
	n := fs.Int("n", 20, "rows at most")
	window := fs.Duration("window", runtime.DefaultWindow, "the entities' detection window: the span rates are measured over")
	once := fs.Bool("once", false, "print the table once and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, topUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "hotkeygen top takes no arguments, got %q\n%s\n", fs.Args(), topUsage)
		return 2
	case *every <= 0 || *n <= 0:
		fmt.Fprintf(stderr, "hotkeygen top: -every and -n must be positive\n%s\n", topUsage)
		return 2
	case *window < aggregate.Slots*time.Millisecond:
		fmt.Fprintf(stderr, "hotkeygen top: -window must be at least %v, as a repository's window\n", aggregate.Slots*time.Millisecond)
		return 2
	}

	rdb := redisClient(*addr)
	defer rdb.Close()
	v := &topView{rdb: rdb, entity: *entity, window: *window, n: *n}
	if *once {
		rows, err := v.collect(ctx, now())
		if err != nil {
			fmt.Fprintf(stderr, "hotkeygen top: %v\n", err)
			return 1
		}
		v.print(stdout, rows)
		return 0
	}
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		at := now()
		rows, err := v.collect(ctx, at)
		if ctx.Err() != nil {
			return 0
		}
		fmt.Fprint(stdout, "\x1b[H\x1b[2J") // home, clear
		fmt.Fprintf(stdout, "hotkeygen top  %s  %v window to %s  (Ctrl-C quits)\n\n", *addr, *window, at.Format(time.TimeOnly))
		if err != nil {
			fmt.Fprintf(stdout, "error: %v\n", err)
		} else {
			v.print(stdout, rows)
		}
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
	}
}

// defaultRedisAddr is REDIS_ADDR, as the demo reads it, or Redis's own
// default.
func defaultRedisAddr() string {
	if a := os.Getenv("REDIS_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// redisClient connects to addr: one server, or a cluster when addr lists
// addresses separated by commas.
func redisClient(addr string) redis.UniversalClient {
	if !strings.Contains(addr, ",") {
		return redis.NewClient(&redis.Options{Addr: addr})
	}
	var addrs []string
	for a := range strings.SplitSeq(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
}

// topView reads the aggregation sets and tabulates them.
type topView struct {
	rdb    redis.UniversalClient
	entity string // "" for every entity
	window time.Duration
	n      int

	known      []string // entities found by the last SCAN
	discovered time.Time
}

// topRow is one key's line: its reads over the window, per second, and its
// share of every read its entity's replicas reported.
type topRow struct {
	entity, key string
	qps, share  float64
}

// collect sums, for each entity, the last window every replica has
// reported by now, and returns the busiest n keys, busiest first.
func (v *topView) collect(ctx context.Context, now time.Time) ([]topRow, error) {
	entities, err := v.entities(ctx, now)
	if err != nil {
		return nil, err
	}
	first, last := aggregate.Span(now, v.window)
	var rows []topRow
	for _, e := range entities {
		sums, err := aggregate.Read(ctx, v.rdb, e, first, last, 0)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e, err)
		}
		var total float64
		for _, n := range sums {
			total += n
		}
		for key, n := range sums {
			rows = append(rows, topRow{entity: e, key: key, qps: n / v.window.Seconds(), share: n / total})
		}
	}
	slices.SortFunc(rows, func(a, b topRow) int {
		if c := cmp.Compare(b.qps, a.qps); c != 0 {
			return c
		}
		if c := cmp.Compare(a.entity, b.entity); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	return rows[:min(len(rows), v.n)], nil
}

// entities returns -entity, or the entities that have sets in Redis,
// found by a SCAN at most every rediscoverEvery.
func (v *topView) entities(ctx context.Context, now time.Time) ([]string, error) {
	if v.entity != "" {
		return []string{v.entity}, nil
	}
	if v.known != nil && now.Sub(v.discovered) < rediscoverEvery {
		return v.known, nil
	}
	var mu sync.Mutex
	found := map[string]bool{}
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, aggregate.Prefix+"*", 1000).Iterator()
		for it.Next(ctx) {
			if e, _, ok := aggregate.Parse(it.Val()); ok {
				mu.Lock()
				found[e] = true
				mu.Unlock()
			}
		}
		return it.Err()
	}
	var err error
	switch c := v.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		err = fmt.Errorf("cannot scan a %T", v.rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("scan for %s*: %w", aggregate.Prefix, err)
	}
	v.known = append([]string{}, slices.Sorted(maps.Keys(found))...)
	v.discovered = now
	return v.known, nil
}

// print writes rows as a table, or says why there is none.
func (v *topView) print(w io.Writer, rows []topRow) {
	if len(rows) == 0 {
		fmt.Fprintf(w, "no reads reported in the last %v window: are repositories running with aggregate=on, and is -window theirs?\n", v.window)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTITY\tKEY\t      QPS\t SHARE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%9.1f\t%5.1f%%\n", r.entity, r.key, r.qps, 100*r.share)
	}
	tw.Flush()
}
