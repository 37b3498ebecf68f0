// Command hashbench reproduces the design's comparison of two ways to keep
// a collection in Redis: a String key per item, and one hash per owner (a
// hotkeygen collection, layout=hash). For each number of items per owner
// it writes every owner's tokens to a private redis-server, and reports
// the memory Redis used for them (used_memory before and after), and the
// commands and round trips it takes to read one owner's collection, to
// log the owner out everywhere (delete every token), and to add a token.
//
//	go run ./bench/hashbench                         # 10,000 owners × 2, 3, 10, 100
//	go run ./bench/hashbench -owners 1000 -items 3   # a quick look
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

func main() {
	owners := flag.Int("owners", 10000, "owners (users), each with one collection")
	items := flag.String("items", "2,3,10,100", "comma-separated numbers of items per owner")
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*items, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			log.Fatalf("-items: %q is not a positive number", s)
		}
		ns = append(ns, n)
	}
	srv, err := redistest.Launch()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	rows, err := run(context.Background(), srv.Addr, *owners, ns)
	if err != nil {
		log.Fatal(err)
	}
	report(os.Stdout, *owners, rows)
}

// row is one layout at one number of items per owner.
type row struct {
	Layout              string
	Items               int
	Listpack            int   // hash-max-listpack-value of the run
	Bytes               int64 // MEMORY USAGE of every key, summed
	Used                int64 // used_memory after writing, less before
	Read, Logout, Add   cost
	ReadTime, LogoutDur time.Duration
}

// run measures every layout at every n of ns, each on an emptied server.
func run(ctx context.Context, addr string, owners int, ns []int) ([]row, error) {
	probe := redis.NewClient(&redis.Options{Addr: addr})
	defer probe.Close()
	rt := &roundTrips{}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rdb.AddHook(rt)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var rows []row
	for _, n := range ns {
		for _, run := range []struct {
			listpack int
			mk       func() (layout, func(), error)
		}{
			{64, func() (layout, func(), error) { return stringLayout{rdb}, func() {}, nil }},
			{64, func() (layout, func(), error) { return newHash(rdb, false, quiet) }},
			{64, func() (layout, func(), error) { return newHash(rdb, true, quiet) }},
			{bigListpack, func() (layout, func(), error) { return newHash(rdb, false, quiet) }},
			{bigListpack, func() (layout, func(), error) { return newHash(rdb, true, quiet) }},
		} {
			if err := probe.ConfigSet(ctx, "hash-max-listpack-value", strconv.Itoa(run.listpack)).Err(); err != nil {
				return nil, err
			}
			l, done, err := run.mk()
			if err != nil {
				return nil, err
			}
			r, err := measureLayout(ctx, l, rt, probe, owners, n)
			done()
			if err != nil {
				return nil, fmt.Errorf("%s, %d items: %w", l.name(), n, err)
			}
			r.Listpack = run.listpack
			rows = append(rows, r)
			fmt.Fprintf(os.Stderr, "%-16s %3d items, listpack %3d: %d bytes (used_memory %+d)\n", r.Layout, n, run.listpack, r.Bytes, r.Used)
		}
	}
	return rows, nil
}

// newHash returns the hash layout over a runtime.Collection that sends
// nothing in the background: no invalidation session, no refresh, no
// monitor, so the server's command counts are the operations' own.
func newHash(rdb *redis.Client, expires bool, quiet *slog.Logger) (layout, func(), error) {
	col, err := runtime.NewCollection(rdb, tokenGlue(expires), runtime.WithEntity("token"), runtime.WithTTL(ttl),
		runtime.WithInvalidate(runtime.InvalidateOff), runtime.WithRefresh(0), runtime.WithMonitorEvery(0),
		runtime.WithLogger(quiet), runtime.WithMaxValueBytes(0))
	if err != nil {
		return nil, nil, err
	}
	return hashLayout{col: col, expires: expires}, func() { col.Close() }, nil
}

// bigListpack is the hash-max-listpack-value of the second run of the
// hash layouts: large enough for a token's msgpack (about 110 bytes) and
// its expiry index, so the hashes stay in Redis's compact encoding
// (Redis's default, 64, turns a hash with a longer value into a hash
// table).
const bigListpack = 512

// writeBatch is how many owners one pipeline writes.
const writeBatch = 500

func measureLayout(ctx context.Context, l layout, rt *roundTrips, probe *redis.Client, owners, n int) (row, error) {
	r := row{Layout: l.name(), Items: n}
	if err := probe.FlushAll(ctx).Err(); err != nil {
		return r, err
	}
	before, err := usedMemory(ctx, probe)
	if err != nil {
		return r, err
	}
	now := time.Now()
	for start := 0; start < owners; start += writeBatch {
		var ts []*Token
		for u := start; u < min(start+writeBatch, owners); u++ {
			ts = append(ts, tokensOf(int64(u), n, now)...)
		}
		if err := l.write(ctx, ts); err != nil {
			return r, err
		}
	}
	after, err := usedMemory(ctx, probe)
	if err != nil {
		return r, err
	}
	r.Used = after - before
	if r.Bytes, err = keyMemory(ctx, probe); err != nil {
		return r, err
	}

	o := owner{UserID: int64(owners / 2), Platform: "ios"}
	var times []time.Duration
	for i := range 5 { // the median of five owners' reads
		var got int
		start := time.Now()
		c, err := measure(ctx, rt, probe, func() (err error) {
			got, err = l.read(ctx, owner{UserID: int64(owners/2 + i), Platform: "ios"})
			return err
		})
		times = append(times, time.Since(start))
		if err != nil {
			return r, err
		}
		if got != n {
			return r, fmt.Errorf("read %d tokens of an owner, want %d", got, n)
		}
		r.Read = c
	}
	slices.Sort(times)
	r.ReadTime = times[len(times)/2]
	start := time.Now()
	if r.Logout, err = measure(ctx, rt, probe, func() error { return l.logout(ctx, o) }); err != nil {
		return r, err
	}
	r.LogoutDur = time.Since(start)
	if got, err := l.read(ctx, o); err != nil || got != 0 {
		return r, fmt.Errorf("after logging out, %d tokens are left (%v)", got, err)
	}
	extra := tokensOf(int64(owners/2+1), n+1, now)[n]
	if r.Add, err = measure(ctx, rt, probe, func() error { return l.add(ctx, extra) }); err != nil {
		return r, err
	}
	return r, nil
}

// report prints the rows as the Markdown table BENCHMARKS.md quotes.
func report(w io.Writer, owners int, rows []row) {
	fmt.Fprintf(w, "%d owners; read and log out are one owner's, add is one token\n\n", owners)
	fmt.Fprintln(w, "| items/owner | layout | hash-max-listpack-value | MEMORY USAGE | per owner | vs String | used_memory | read: round trips / commands (in Redis) | read time | log out: round trips / commands (in Redis) | add: round trips / commands (in Redis) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---|---:|---|---|")
	var base int64
	for _, r := range rows {
		if r.Layout == (stringLayout{}).name() {
			base = r.Bytes
		}
		fmt.Fprintf(w, "| %d | %s | %d | %.2f MB | %d B | %s | %.2f MB | %d / %d (%d) | %s | %d / %d (%d) | %d / %d (%d) |\n",
			r.Items, r.Layout, r.Listpack, float64(r.Bytes)/1e6, r.Bytes/int64(owners), pct(r.Bytes, base), float64(r.Used)/1e6,
			r.Read.Trips, r.Read.Cmds, r.Read.ServerCmds, r.ReadTime.Round(time.Microsecond),
			r.Logout.Trips, r.Logout.Cmds, r.Logout.ServerCmds,
			r.Add.Trips, r.Add.Cmds, r.Add.ServerCmds)
	}
}

// pct is b relative to base: "−45%", or "—" for the base itself.
func pct(b, base int64) string {
	if b == base || base == 0 {
		return "—"
	}
	return fmt.Sprintf("%+.0f%%", 100*float64(b-base)/float64(base))
}
