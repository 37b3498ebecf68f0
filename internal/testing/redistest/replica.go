package redistest

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// LaunchPair starts a master and one replica of it, the replica synced
// before it returns: what FAILOVER (Redis 6.2+) hands the master's role
// to, and what a Sentinel watches. args are passed on to both servers.
// The caller stops them.
func LaunchPair(args ...string) (master, replica *Server, err error) {
	// Either may serve a full sync, the replica after a failover: at once,
	// not after the default five seconds of waiting for more replicas.
	args = append([]string{"--repl-diskless-sync-delay", "0"}, args...)
	if master, err = Launch(args...); err != nil {
		return nil, nil, err
	}
	if replica, err = Launch(append(args, "--replicaof", "127.0.0.1", strconv.Itoa(master.port))...); err != nil {
		master.Stop()
		return nil, nil, err
	}
	if err := waitSynced(replica, master); err != nil {
		replica.Stop()
		master.Stop()
		return nil, nil, err
	}
	return master, replica, nil
}

// waitSynced waits until replica has a live link to master.
func waitSynced(replica, master *Server) error {
	rdb := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
	defer rdb.Close()
	return poll("replica "+replica.Addr+" to sync with "+master.Addr, func(ctx context.Context) bool {
		info, err := rdb.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
}
