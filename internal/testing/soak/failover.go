package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
)

// ReplicaFaults are the faults of a run with Config.Replica: FAILOVER
// (Redis 6.2+), the coordinated switch of a master and its replica, there
// and back. The master pauses writes until the replica has them all, so
// no acknowledged write is lost.
//
// FAILOVER is for deployments without a Sentinel (one would fail over
// again on its own; there, SENTINEL FAILOVER is the command, see
// SentinelFaults), whose clients reach the master at an endpoint the
// operator moves after the switch: a virtual IP, a DNS name, a managed
// service's primary endpoint. Here each client's proxy is that endpoint,
// moved as soon as the new master answers as one, which closes every
// connection through it as a virtual IP's move does. Until it moves,
// writes meet the demoted master and fail (READONLY).
var ReplicaFaults = []Fault{
	{Name: "FAILOVER", inject: failover, lasts: 500 * time.Millisecond},
	{Name: "FAILOVER back", inject: failover, lasts: 500 * time.Millisecond},
}

// failover switches the master and its replica with FAILOVER and moves
// every endpoint, and the admin client, to the new master. Until then
// Redis answers, but pauses or refuses writes: a window the checker
// judges for availability, holding reads to the bound.
func failover(ctx context.Context, r *run, _ *history.Log) error {
	from := r.now()
	defer func() { r.record(history.Window{From: from, To: r.now(), Answered: true}) }()
	if err := r.admin.Do(ctx, "FAILOVER", "TIMEOUT", 5000).Err(); err != nil {
		return err
	}
	next := redis.NewClient(&redis.Options{Addr: r.replica.Addr, MaxRetries: -1})
	defer next.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		role, err := next.Do(ctx, "ROLE").Slice()
		if err == nil && len(role) > 0 && role[0] == "master" {
			break
		}
		if time.Now().After(deadline) || !sleep(ctx, 5*time.Millisecond) {
			return fmt.Errorf("soak: %s is not master 10s after FAILOVER: %v %v", r.replica.Addr, role, err)
		}
	}
	r.srv, r.replica = r.replica, r.srv
	for _, p := range r.proxies {
		if err := p.Move(r.srv.Addr); err != nil {
			return err
		}
	}
	r.admin.Close()
	r.admin = r.client(redis.Options{MaxRetries: -1})
	return nil
}
