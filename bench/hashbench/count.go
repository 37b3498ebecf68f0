package main

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// roundTrips counts what a client sends: one round trip per command sent
// alone or per pipeline, and the commands in them. It is a go-redis hook,
// so it sees exactly what the layouts' code sends.
type roundTrips struct {
	trips, cmds atomic.Int64
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.trips.Add(1)
		r.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.trips.Add(1)
		r.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// cost is what one operation took: client round trips and commands, and
// the commands Redis executed, those run inside scripts included.
type cost struct {
	Trips, Cmds, ServerCmds int64
}

// measure runs op and returns its cost. probe is a client of the same
// server without the hook, whose INFO calls are left out of the count.
func measure(ctx context.Context, rt *roundTrips, probe *redis.Client, op func() error) (cost, error) {
	before, err := serverCalls(ctx, probe)
	if err != nil {
		return cost{}, err
	}
	t0, c0 := rt.trips.Load(), rt.cmds.Load()
	if err := op(); err != nil {
		return cost{}, err
	}
	t1, c1 := rt.trips.Load(), rt.cmds.Load()
	after, err := serverCalls(ctx, probe)
	if err != nil {
		return cost{}, err
	}
	return cost{Trips: t1 - t0, Cmds: c1 - c0, ServerCmds: after - before}, nil
}

// serverCalls sums the calls of every command in INFO commandstats but
// INFO itself.
func serverCalls(ctx context.Context, probe *redis.Client) (int64, error) {
	info, err := probe.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var total int64
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err == nil {
			total += n
		}
	}
	return total, nil
}

// usedMemory is INFO memory's used_memory, in bytes.
func usedMemory(ctx context.Context, probe *redis.Client) (int64, error) {
	info, err := probe.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, nil
}

// keyMemory sums MEMORY USAGE (SAMPLES 0: every element counted) of
// every key on the server.
func keyMemory(ctx context.Context, probe *redis.Client) (int64, error) {
	var total int64
	var cursor uint64
	for {
		keys, next, err := probe.Scan(ctx, cursor, "", 1000).Result()
		if err != nil {
			return 0, err
		}
		pipe := probe.Pipeline()
		cmds := make([]*redis.IntCmd, len(keys))
		for i, k := range keys {
			cmds[i] = pipe.MemoryUsage(ctx, k, 0)
		}
		if len(keys) > 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				return 0, err
			}
		}
		for _, c := range cmds {
			total += c.Val()
		}
		if cursor = next; cursor == 0 {
			return total, nil
		}
	}
}
