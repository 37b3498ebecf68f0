// Command demo runs a skewed read load on a few thousand users and prints,
// as it goes, which keys are hot and how much traffic the local copies
// absorb.
//
// It uses the Redis at REDIS_ADDR (or -redis) when set; otherwise it starts
// an embedded in-process Redis, so it runs on a machine with nothing but Go.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime"
)

func main() {
	addr := flag.String("redis", os.Getenv("REDIS_ADDR"), "Redis address; empty starts an embedded Redis")
	users := flag.Int("users", 5000, "number of users")
	workers := flag.Int("workers", 4, "concurrent readers")
	skew := flag.Float64("skew", 1.1, "Zipf exponent of the read load (above 1)")
	duration := flag.Duration("duration", 30*time.Second, "how long to run; 0 runs until Ctrl-C")
	every := flag.Duration("every", 2*time.Second, "how often to print")
	verbose := flag.Bool("v", false, "log promotions and demotions")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if err := run(ctx, *addr, *users, *workers, *skew, *every, *verbose); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string, users, workers int, skew float64, every time.Duration, verbose bool) error {
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("start embedded Redis: %w", err)
		}
		defer mr.Close()
		addr = mr.Addr()
		fmt.Println("using an embedded Redis (set REDIS_ADDR to use a real one)")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if verbose {
		logger = slog.Default()
	}
	repo := userstore.NewUserRepo(rdb, runtime.WithLogger(logger))
	defer repo.Close()

	fmt.Printf("writing %d users to %s\n", users, addr)
	for id := range int64(users) {
		u := &userstore.User{ID: id, Name: "user " + strconv.FormatInt(id, 10), Email: fmt.Sprintf("u%d@example.com", id)}
		if err := repo.SetUser(ctx, u); err != nil {
			return err
		}
	}

	fmt.Printf("reading with %d workers, Zipf skew %.2f; Ctrl-C stops\n\n", workers, skew)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 42))
			zipf := rand.NewZipf(r, skew, 1, uint64(users-1))
			for ctx.Err() == nil {
				if _, err := repo.GetUser(ctx, int64(zipf.Uint64())); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		}()
	}

	tick := time.NewTicker(every)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case err := <-errs:
			wg.Wait()
			return err
		case <-ctx.Done():
			wg.Wait()
			printStats(time.Since(start), repo.Stats())
			fmt.Println("stopped")
			return nil
		case <-tick.C:
			printStats(time.Since(start), repo.Stats())
		}
	}
}

func printStats(elapsed time.Duration, st runtime.Stats) {
	fmt.Printf("%5.0fs  reads/s %-8.0f hit rate %5.1f%%  traffic share %5.1f%%  local %d  redis errors %d\n",
		elapsed.Seconds(), st.GetQPS, 100*st.HitRate, 100*st.TrafficShare, st.LocalSize, st.RedisErrors)
	if len(st.HotKeys) == 0 {
		fmt.Println("       no hot keys yet")
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\thot key\tQPS\thot for\t")
	for _, k := range st.HotKeys {
		fmt.Fprintf(tw, "\t%s\t%.0f\t%s\t\n", k.Key, k.QPS, time.Since(k.Since).Truncate(time.Second))
	}
	tw.Flush()
	fmt.Println()
}
