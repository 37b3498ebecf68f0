package redistest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a local Redis Cluster of masters, each a private redis-server
// on a free loopback port, joined with redis-cli --cluster create.
type Cluster struct {
	Addrs []string
	Nodes []*Server
}

// StartCluster starts a cluster of masters for t and stops it when t ends.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatal(errors.New(Install + " (the cluster tests need redis-cli too; it comes with redis-server)"))
	}
	c := &Cluster{}
	for range masters {
		s, err := Launch("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v: %s", err, out)
	}
	if err := c.waitReady(); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitReady waits until every node reports the cluster up and agrees on
// the slots, so the first command of a test does not meet a half-formed
// cluster.
func (c *Cluster) waitReady() error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		ready := true
		for _, n := range c.Nodes {
			rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
			info, err := rdb.ClusterInfo(context.Background()).Result()
			rdb.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.Nodes))) {
				ready = false
				break
			}
		}
		if ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: cluster on %v not ready after 20s", c.Addrs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Client returns a cluster client that is closed when t ends.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}
