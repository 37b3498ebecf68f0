package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

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
	case *n > maxRows:
		fmt.Fprintf(stderr, "hotkeygen top: -n must be at most %d, the members read of each set\n%s\n", maxRows, topUsage)
		return 2
	case *window < aggregate.Slots*time.Millisecond:
		fmt.Fprintf(stderr, "hotkeygen top: -window must be at least %v, as a repository's window\n", aggregate.Slots*time.Millisecond)
		return 2
	}

	rdb := redisClient(*addr)
	defer rdb.Close()
	v := &topView{rdb: rdb, entity: *entity, window: *window, n: *n}
	if *once {
		t, err := v.collect(ctx, now())
		if err != nil {
			fmt.Fprintf(stderr, "hotkeygen top: %v\n", err)
			return 1
		}
		v.print(stdout, t)
		return 0
	}
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		at := now()
		t, err := v.collect(ctx, at)
		if ctx.Err() != nil {
			return 0
		}
		fmt.Fprint(stdout, "\x1b[H\x1b[2J") // home, clear
		fmt.Fprintf(stdout, "hotkeygen top  %s  %v window to %s  (Ctrl-C quits)\n\n", *addr, *window, at.Format(time.TimeOnly))
		if err != nil {
			fmt.Fprintf(stdout, "error: %v\n", err)
		} else {
			v.print(stdout, t)
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
// share of its entity's reads: of every read the replicas counted, or,
// from replicas that do not report their totals, of the reads read.
type topRow struct {
	entity, key string
	qps         float64
	share       float64 // NaN when the entity's total is 0: no share to show
}

// readPerSet bounds what a draw reads: the top readPerSet members of each
// set (one set per slot, Slots a window), with their scores, plus one more
// to know the score a member left out can have at most, and the set's
// ZCARD. A repository writes at most aggregate_top (default 50) members per
// replica per slot, so a set holds readPerSet members or fewer until 20
// replicas report disjoint keys at the default, far more when they share
// keys, which is what aggregation is for: in that case every set is read
// whole and the table is exact. Beyond it, what a draw costs stays at
// Slots*(readPerSet+1) members an entity (10,010, about 1 MB of replies for
// keys of 60 bytes) however large the sets grow, and the price is accuracy,
// which the table states: a key's count can be low by at most the sum of
// the scores of the first member left out of each cut set (see topTable's
// note), and shares are of the reads read.
const readPerSet = 1000

// maxRows bounds -n: rows beyond readPerSet could not all be ranked from a
// bounded read, and no terminal shows more.
const maxRows = readPerSet

// maxCount is the largest score a repository can write and top sums: a
// count of reads, exact in a float64 up to 2^53. Bounding each score keeps
// a sum of Slots*(readPerSet+1) of them finite, so no column prints Inf or
// NaN.
const maxCount = 1 << 53

// topTable is what a draw found: the rows to show and what the table must
// say about them.
type topTable struct {
	rows []topRow
	// skipped counts members whose score no repository writes: negative,
	// infinite, NaN, or above maxCount. They are left out of counts and
	// totals rather than shown, since no rate or share follows from them.
	skipped int
	// cut counts sets holding more than readPerSet members; missed is the
	// most reads per second a key's row (or a key not shown) can lack
	// because of it, summed over the cut sets.
	cut    int
	missed float64
}

// collect sums, for each entity, the last window every replica has
// reported by now, and returns the busiest n keys, busiest first.
func (v *topView) collect(ctx context.Context, now time.Time) (topTable, error) {
	entities, err := v.entities(ctx, now)
	if err != nil {
		return topTable{}, err
	}
	first, last := aggregate.Span(now, v.window)
	var t topTable
	for _, e := range entities {
		if err := v.collectEntity(ctx, e, first, last, &t); err != nil {
			return topTable{}, fmt.Errorf("read %s: %w", e, err)
		}
	}
	slices.SortFunc(t.rows, func(a, b topRow) int {
		if c := cmp.Compare(b.qps, a.qps); c != 0 {
			return c
		}
		if c := cmp.Compare(a.entity, b.entity); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	t.rows = t.rows[:min(len(t.rows), v.n)]
	return t, nil
}

// collectEntity reads entity's sets for slots first to last, each to its
// top readPerSet members, in one pipeline, and adds the entity's rows to
// t. On a Redis Cluster the sets live on several nodes, so they are read
// one by one, never combined in Redis.
func (v *topView) collectEntity(ctx context.Context, entity string, first, last int64, t *topTable) error {
	pipe := v.rdb.Pipeline()
	type set struct {
		top   *redis.ZSliceCmd
		card  *redis.IntCmd
		total *redis.FloatCmd
	}
	sets := make([]set, 0, last-first+1)
	for s := first; s <= last; s++ {
		key := aggregate.Key(entity, s)
		sets = append(sets, set{pipe.ZRevRangeWithScores(ctx, key, 0, readPerSet), pipe.ZCard(ctx, key), pipe.ZScore(ctx, key, aggregate.TotalMember)})
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	sums := map[string]float64{}
	var total, missed float64
	for _, s := range sets {
		zs := slices.DeleteFunc(s.top.Val(), func(z redis.Z) bool { return z.Member == aggregate.TotalMember })
		keys := s.card.Val()
		if s.total.Err() == nil {
			keys-- // TotalMember is no key
		}
		read := 0.0 // the reads of the members read
		if keys > readPerSet && len(zs) > 0 {
			// The set was cut: the extra member read, or the last one when
			// TotalMember took its place, bounds what was left out.
			t.cut++
			if out := zs[min(readPerSet, len(zs)-1)].Score; countable(out) {
				missed += out
			} else if out > 0 { // above maxCount: the bound is as large as a count can be
				missed += maxCount
			}
			zs = zs[:min(readPerSet, len(zs))]
		}
		for _, z := range zs {
			name, ok := z.Member.(string)
			if !ok || !countable(z.Score) {
				t.skipped++
				continue
			}
			sums[name] += z.Score
			read += z.Score
		}
		// The replicas' total reads in the slot, unless none sent it (an
		// older version) or it is not a count: then the reads read.
		if n, err := s.total.Result(); err == nil && countable(n) && n >= read {
			total += n
		} else {
			total += read
		}
	}
	t.missed += missed / v.window.Seconds()
	for key, n := range sums {
		share := math.NaN()
		if total > 0 {
			share = n / total
		}
		t.rows = append(t.rows, topRow{entity: entity, key: key, qps: n / v.window.Seconds(), share: share})
	}
	return nil
}

// countable reports whether score is a count a repository can have
// written: a number from 0 to maxCount. The test is written so NaN fails
// it.
func countable(score float64) bool { return score >= 0 && score <= maxCount }

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

// print writes the table, or says why there is none. Entity names and keys
// are shown quoted and cut to displayWidth (see display): they come from
// Redis, where anyone with a write may have put terminal escapes, line
// breaks or a forged row in them.
func (v *topView) print(w io.Writer, t topTable) {
	if len(t.rows) == 0 {
		fmt.Fprintf(w, "no reads reported in the last %v window: are repositories running with aggregate=on, and is -window theirs?\n", v.window)
	} else {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ENTITY\tKEY\t      QPS\t SHARE")
		for _, r := range t.rows {
			share := "     -"
			if !math.IsNaN(r.share) {
				share = fmt.Sprintf("%5.1f%%", 100*r.share)
			}
			fmt.Fprintf(tw, "%s\t%s\t%9.1f\t%s\n", display(r.entity), display(r.key), r.qps, share)
		}
		tw.Flush()
	}
	if t.cut > 0 {
		fmt.Fprintf(w, "\n%d sets hold more than %d members; only the top %d of each were read: counts may be low by up to %.1f/s.\n",
			t.cut, readPerSet, readPerSet, t.missed)
	}
	if t.skipped > 0 {
		fmt.Fprintf(w, "\n%d members skipped: their scores (negative, infinite, not a number, or above 2^53) are no count a repository writes.\n", t.skipped)
	}
}

// displayWidth bounds the characters display shows of a name, quotes and
// marker aside, so one row of the table is always one line a terminal can
// show.
const displayWidth = 48

// display shows s as a Go string literal: control bytes, escape sequences,
// line breaks and invalid UTF-8 appear as escapes and do nothing to the
// terminal. Past displayWidth characters of the literal it is cut, at a
// whole escape, and ends with an ellipsis inside the quotes and s's length
// in bytes: "user:aaaa…" (1048576 bytes).
func display(s string) string {
	b := make([]byte, 0, displayWidth+32)
	b = append(b, '"')
	shown := 0 // characters of the literal so far
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+size])
		q = q[1 : len(q)-1]
		if shown += utf8.RuneCountInString(q); shown > displayWidth {
			return string(b) + `…" (` + strconv.Itoa(len(s)) + " bytes)"
		}
		b = append(b, q...)
		i += size
	}
	return string(append(b, '"'))
}
