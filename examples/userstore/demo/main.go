// Command demo runs a skewed read load on the userstore example's
// repositories, with a flash crowd that moves to new users every ten
// seconds, and shows which keys are hot: on a live page at
// http://127.0.0.1:8080/debug/hotkeys/ and as a table printed every few
// seconds.
//
// It uses the Redis at REDIS_ADDR (or -redis) when set; otherwise it starts
// an embedded in-process Redis. Its rows live in the PostgreSQL at
// DATABASE_URL (or -database) when set, in SQLite in memory otherwise, so
// it runs on a machine with nothing but Go. It runs until Ctrl-C, or for
// -duration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// config is what the flags set.
type config struct {
	redis    string        // Redis address; empty starts an embedded one
	database string        // a postgres:// URL; empty keeps the rows in SQLite in memory
	http     string        // address of the live page; empty serves none
	duration time.Duration // 0 runs until ctx ends
	every    time.Duration // how often the table is printed
	verbose  bool          // log promotions and demotions
	otel     bool          // instrument with OpenTelemetry, print read durations on stopping
	load     load
}

// defaultLoad is the load the flags default to: 20,000 reads a second,
// a fifth of them of orders; of the user reads, 30% go to a crowd of three
// that moves every ten seconds.
// Orders change 20 times a second, and a tenth of order reads ask for
// orders that never existed.
var defaultLoad = load{Users: 5000, Orders: 200, Workers: 4, Rate: 20000, Skew: 1.1, OrderShare: 0.2, Crowd: 3, CrowdShare: 0.3, CrowdEvery: 10 * time.Second, Changes: 20, Missing: 0.1}

func main() {
	var c config
	d := defaultLoad
	flag.StringVar(&c.redis, "redis", os.Getenv("REDIS_ADDR"), "Redis address; empty starts an embedded Redis")
	flag.StringVar(&c.database, "database", os.Getenv("DATABASE_URL"), "a postgres:// URL of the database; empty keeps the rows in SQLite in memory")
	flag.StringVar(&c.http, "http", "127.0.0.1:8080", "address of the live page; empty serves none")
	flag.DurationVar(&c.duration, "duration", 0, "how long to run; 0 runs until Ctrl-C")
	flag.DurationVar(&c.every, "every", 5*time.Second, "how often to print the hot keys")
	flag.BoolVar(&c.verbose, "v", false, "log promotions and demotions")
	flag.BoolVar(&c.otel, "otel", false, "instrument the repositories with OpenTelemetry, and print the histogram of read durations on stopping")
	flag.IntVar(&c.load.Users, "users", d.Users, "number of users")
	flag.IntVar(&c.load.Orders, "orders", d.Orders, "orders per tenant")
	flag.IntVar(&c.load.Workers, "workers", d.Workers, "concurrent readers")
	flag.Float64Var(&c.load.Rate, "rate", d.Rate, "reads per second in all; 0 reads as fast as Redis answers")
	flag.Float64Var(&c.load.Skew, "skew", d.Skew, "Zipf exponent of the read load (above 1)")
	flag.Float64Var(&c.load.OrderShare, "order-share", d.OrderShare, "share of reads that are of orders")
	flag.IntVar(&c.load.Crowd, "crowd", d.Crowd, "users in the flash crowd; 0 disables it")
	flag.Float64Var(&c.load.CrowdShare, "crowd-share", d.CrowdShare, "share of user reads that go to the flash crowd")
	flag.DurationVar(&c.load.CrowdEvery, "crowd-every", d.CrowdEvery, "how often the flash crowd moves to new users")
	flag.Float64Var(&c.load.Changes, "changes", d.Changes, "order rows changed in the database per second, each marked for the change buffer after it commits")
	flag.Float64Var(&c.load.Missing, "missing", d.Missing, "share of order reads of orders that never existed, for the Bloom filter to turn away")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	if c.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.duration)
		defer cancel()
	}
	if err := run(ctx, c, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run runs the demo until ctx ends, then stops the load, the page and the
// repositories, and returns nil.
func run(ctx context.Context, c config, out io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	addr := c.redis
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("start embedded Redis: %w", err)
		}
		defer mr.Close()
		addr = mr.Addr()
		fmt.Fprintf(out, "using an embedded Redis at %s (set REDIS_ADDR or -redis to use a real one)\n", addr)
	} else {
		fmt.Fprintf(out, "using the Redis at %s\n", addr)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if c.verbose {
		logger = slog.Default()
	}
	var opts []runtime.Option
	printDurations := func(io.Writer) error { return nil }
	if c.otel {
		var opt runtime.Option
		opt, printDurations = readDurations()
		opts = append(opts, opt)
	}
	r, err := openRepos(ctx, rdb, c.database, logger, c.load.Users, c.load.Orders, opts...)
	if err != nil {
		return err
	}
	defer r.Close()
	if c.database == "" {
		fmt.Fprintf(out, "using %s (set DATABASE_URL or -database to use a PostgreSQL)\n", r.dbName)
	} else {
		fmt.Fprintf(out, "using the %s\n", r.dbName)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 2)
	running := 0
	if c.http != "" {
		ln, err := net.Listen("tcp", c.http)
		if err != nil {
			return fmt.Errorf("live page: %w (-http changes the address, -http '' serves none)", err)
		}
		fmt.Fprintf(out, "live page: http://%s%s\n", ln.Addr(), pagePath)
		running++
		go func() { done <- serve(ctx, ln, newMux(r)) }()
	}
	running++
	go func() {
		c.load.run(ctx, r, func(crowd []int64) {
			keys := make([]string, len(crowd))
			for i, id := range crowd {
				keys[i] = userstore.UserKey(id)
			}
			fmt.Fprintf(out, "flash crowd: %s\n", strings.Join(keys, " "))
		})
		done <- nil
	}()
	rate := "as fast as Redis answers"
	if c.load.Rate > 0 {
		rate = fmt.Sprintf("%.0f reads/s", c.load.Rate)
	}
	fmt.Fprintf(out, "reading %d users and %d orders (loaded from the database into Redis on first read) with %d workers at %s, Zipf skew %.2f; Ctrl-C stops\n\n",
		c.load.Users, c.load.Orders*len(tenants), c.load.Workers, rate, c.load.Skew)

	start := time.Now()
	tick := time.NewTicker(c.every)
	defer tick.Stop()
	var errs []error
	for running > 0 {
		select {
		case err := <-done:
			running--
			if err != nil {
				errs = append(errs, err)
				cancel(err) // stop the rest
			}
		case <-tick.C:
			if ctx.Err() == nil {
				printTable(out, time.Since(start), livepage.NewReport(time.Now(), r.sources()...))
				printDatabase(out, r)
				printChanges(out, r.orders.Stats())
			}
		}
	}
	if len(errs) == 0 {
		printTable(out, time.Since(start), livepage.NewReport(time.Now(), r.sources()...))
		errs = append(errs, printDurations(out))
		fmt.Fprintln(out, "stopped")
	}
	return errors.Join(errs...)
}

func (c config) check() error {
	l := c.load
	switch {
	case l.Users < 2 || l.Orders < 1 || l.Workers < 1:
		return errors.New("-users must be at least 2, -orders and -workers at least 1")
	case l.Changes < 0 || l.Missing < 0 || l.Missing > 1:
		return errors.New("-changes must not be negative, -missing must be a share from 0 to 1")
	case l.Skew <= 1:
		return errors.New("-skew must be above 1")
	case l.Crowd > 0 && l.CrowdEvery <= 0:
		return errors.New("-crowd-every must be positive")
	case c.every <= 0:
		return errors.New("-every must be positive")
	}
	return nil
}
