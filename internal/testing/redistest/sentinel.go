package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinel is a master, one replica of it and one Redis Sentinel watching
// them, each a private redis-server on a free loopback port: enough for a
// failover client to follow a failover.
type Sentinel struct {
	MasterName    string
	SentinelAddrs []string
	Master        *Server
	Replica       *Server
	sentinel      *Server
}

// StartSentinel starts a master, a synced replica and a sentinel that knows
// both, for t, and stops them when t ends. With a quorum of one, the
// sentinel fails over alone: on SENTINEL FAILOVER, or 2s after the
// master stops answering. Not sooner: a master whose writes are paused
// for a planned switchover (CLIENT PAUSE WRITE) holds the sentinel's
// hello PUBLISH, and the PINGs queued behind it on the same link, while
// the switchover waits up to a second for the replica's acknowledgement
// (replicas send one a second); at 500ms the sentinel judged the paused
// master down and failed it over on its own, refusing the planned
// failover (-INPROG) and leaving two masters for a second.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	s, err := LaunchSentinel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// LaunchSentinel is StartSentinel for a program: the caller stops it.
func LaunchSentinel() (*Sentinel, error) {
	s := &Sentinel{MasterName: "mymaster"}
	var err error
	// The replica first, so the sentinel finds it at its first look at the
	// master instead of ten seconds later.
	if s.Master, s.Replica, err = LaunchPair(); err != nil {
		return nil, err
	}
	conf := func(dir string, port int) (string, error) {
		path := filepath.Join(dir, "sentinel.conf") // the sentinel rewrites it: it must be writable
		name := s.MasterName
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n", port, dir) +
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1\n", name, s.Master.port) +
			fmt.Sprintf("sentinel down-after-milliseconds %s 2000\n", name) +
			fmt.Sprintf("sentinel failover-timeout %s 1000\n", name)
		return path, os.WriteFile(path, []byte(text), 0o644)
	}
	if s.sentinel, err = launch(conf, "--sentinel"); err != nil {
		s.Stop()
		return nil, err
	}
	s.SentinelAddrs = []string{s.sentinel.Addr}
	if err := s.waitWatched(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops the three servers.
func (s *Sentinel) Stop() {
	for _, srv := range []*Server{s.sentinel, s.Replica, s.Master} {
		if srv != nil {
			srv.Stop()
		}
	}
}

// waitWatched waits until the sentinel reports the master and knows the
// replica, so that SENTINEL FAILOVER has a replica to promote.
func (s *Sentinel) waitWatched() error {
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.SentinelAddrs[0], MaxRetries: -1})
	defer sc.Close()
	return poll("sentinel "+s.SentinelAddrs[0]+" to watch "+s.Master.Addr+" and "+s.Replica.Addr, func(ctx context.Context) bool {
		addr, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result()
		if err != nil || len(addr) != 2 || addr[1] != strconv.Itoa(s.Master.port) {
			return false
		}
		replicas, err := sc.Replicas(ctx, s.MasterName).Result()
		if err != nil {
			return false
		}
		for _, r := range replicas {
			if r["port"] == strconv.Itoa(s.Replica.port) && r["flags"] == "slave" && r["master-link-status"] == "ok" {
				return true
			}
		}
		return false
	})
}

// Client returns a Sentinel failover client of the master that is closed
// when t ends.
func (s *Sentinel) Client(t testing.TB) *redis.Client {
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: s.MasterName, SentinelAddrs: s.SentinelAddrs})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// poll checks cond every 50ms for up to 20s.
func poll(what string, cond func(ctx context.Context) bool) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ok := cond(ctx)
		cancel()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: timed out after 20s waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
