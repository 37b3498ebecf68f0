package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// Target is the Redis every instance of a run talks to: one server, or a
// cluster of which Addrs lists every node (fleetbench measures each).
type Target struct {
	Cluster bool
	Addrs   []string
}

// Topology names the target as -topology does.
func (t Target) Topology() string {
	if t.Cluster {
		return "cluster"
	}
	return "single"
}

// client returns a go-redis client of the target, a *redis.Client or a
// *redis.ClusterClient, as one service instance would make it; node,
// when not nil, changes the options of each node's client (a cluster's
// are made by the ClusterClient, so that is the only place to set them).
func (t Target) client(node func(*redis.Options)) redis.UniversalClient {
	if !t.Cluster {
		opt := &redis.Options{Addr: t.Addrs[0]}
		if node != nil {
			node(opt)
		}
		return redis.NewClient(opt)
	}
	opt := &redis.ClusterOptions{Addrs: slices.Clone(t.Addrs)} // the client appends to Addrs: never share it
	if node != nil {
		opt.NewClient = func(o *redis.Options) *redis.Client {
			node(o)
			return redis.NewClient(o)
		}
	}
	return redis.NewClusterClient(opt)
}

// connect opens the connections a started service has: one to the
// server, or one to each master, by a PING as a readiness check would
// send. Without it a go-redis pool dials on first use, and an idle
// instance that never read would cost the node nothing but by accident.
func connect(ctx context.Context, rdb redis.UniversalClient) error {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() })
	}
	return rdb.Ping(ctx).Err()
}

// launch starts the target fleetbench measures when -redis gives none:
// a redis-server, or a cluster of three masters without replicas, each on
// a free loopback port. stop stops it.
func launch(cluster bool) (t Target, stop func(), err error) {
	if !cluster {
		srv, err := redistest.Launch()
		if err != nil {
			return Target{}, nil, fmt.Errorf("%w (or give a server with -redis)", err)
		}
		return Target{Addrs: []string{srv.Addr}}, srv.Stop, nil
	}
	c, err := redistest.LaunchCluster(3, 0)
	if err != nil {
		return Target{}, nil, fmt.Errorf("%w (or give a cluster node with -redis)", err)
	}
	return Target{Cluster: true, Addrs: c.Seeds()}, c.Stop, nil
}

// discover makes the target of -redis: the addresses given for a single
// server; for a cluster, every node the first answering address knows
// of (CLUSTER NODES), so that each is measured.
func discover(ctx context.Context, list string, cluster bool) (Target, error) {
	var addrs []string
	for a := range strings.SplitSeq(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return Target{}, errors.New("-redis names no address: give host:port, or leave it out to start a server")
	}
	if !cluster {
		if len(addrs) > 1 {
			return Target{}, fmt.Errorf("-redis names %d addresses for -topology single; give one, or add -topology cluster", len(addrs))
		}
		return Target{Addrs: addrs}, nil
	}
	var lastErr error
	for _, a := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
		text, err := rdb.ClusterNodes(ctx).Result()
		rdb.Close()
		if err != nil {
			lastErr = err
			continue
		}
		nodes := clusterNodeAddrs(text)
		if len(nodes) == 0 {
			return Target{}, fmt.Errorf("CLUSTER NODES on %s lists no connected node", a)
		}
		return Target{Cluster: true, Addrs: nodes}, nil
	}
	return Target{}, fmt.Errorf("no address of -redis %s answers CLUSTER NODES (is it a cluster? without -topology cluster it is taken as one server): %w", list, lastErr)
}

// clusterNodeAddrs returns the host:port of each connected node in a
// CLUSTER NODES reply, whose lines read
// "<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...".
func clusterNodeAddrs(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 8 || strings.Contains(f[2], "fail") || strings.Contains(f[2], "noaddr") || f[7] != "connected" {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		if addr != "" && !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	slices.Sort(out)
	return out
}
