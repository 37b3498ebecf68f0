package soak

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// Fault is one thing that goes wrong with Redis, as it does in production.
type Fault struct {
	Name   string
	inject func(ctx context.Context, r *run, l *history.Log) error
	// replica says the fault needs a replica of every cluster master; a
	// cluster run without such a fault has none, which spares a loaded
	// machine three servers and the sessions on them.
	replica bool
	// proxied says the fault needs every instance behind a proxy of its
	// own (run.proxies).
	proxied bool
	// lasts is about how long the fault takes, so that a run leaves each
	// phase its share of time past it (see every).
	lasts time.Duration
}

// outageFor is how long a killed server stays down; stallFor how long
// DEBUG SLEEP and CLIENT PAUSE keep it from answering.
const (
	outageFor = time.Second
	stallFor  = 500 * time.Millisecond
)

// Faults are every fault a run can inject, in the order a run injects
// them.
var Faults = []Fault{
	{Name: "CLIENT KILL all", inject: func(ctx context.Context, r *run, _ *history.Log) error {
		return killClients(ctx, r.admin)
	}},
	{Name: "CLIENT KILL normal", inject: func(ctx context.Context, r *run, _ *history.Log) error {
		return r.admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err()
	}},
	{Name: "CLIENT KILL pubsub", inject: func(ctx context.Context, r *run, _ *history.Log) error {
		return r.admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err()
	}},
	{Name: "SIGKILL and restart", lasts: outageFor, inject: restart(func(context.Context, *run) error { return nil })},
	// The outage comes before the last faults, so the run sees Redis
	// come back and the service recover.
	// A server that sleeps or pauses its clients answers nothing, as a
	// hung one: an outage, in which hot keys are served from memory, not
	// a wait (see unanswered).
	{Name: "DEBUG SLEEP 0.5", lasts: stallFor, inject: func(ctx context.Context, r *run, _ *history.Log) error {
		defer r.unanswered(r.now())
		return r.admin.Do(ctx, "DEBUG", "SLEEP", stallFor.Seconds()).Err()
	}},
	{Name: "CLIENT PAUSE 500", lasts: stallFor, inject: func(ctx context.Context, r *run, _ *history.Log) error {
		from := r.now()
		err := r.admin.Do(ctx, "CLIENT", "PAUSE", stallFor.Milliseconds(), "ALL").Err()
		sleep(ctx, stallFor)
		r.admin.Ping(ctx) // answered once the pause is over
		r.unanswered(from)
		return err
	}},
	{Name: "FLUSHALL", inject: func(ctx context.Context, r *run, l *history.Log) error {
		return r.flush(ctx, l, "FLUSHALL")
	}},
}

// FaultsNamed returns the faults of Faults and QuietFaults called names,
// in that order.
func FaultsNamed(names []string) ([]Fault, error) {
	all := append(slices.Clip(Faults), QuietFaults...)
	var out []Fault
	for _, name := range names {
		i := slices.IndexFunc(all, func(f Fault) bool { return f.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("soak: no fault %q", name)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// restart stops the server with stop, kills what stop left running
// (SIGKILL), keeps it down for outageFor, starts it again on the same
// port, empty, and seeds it: the writes acknowledged before it exited
// are lost.
func restart(stop func(context.Context, *run) error) func(context.Context, *run, *history.Log) error {
	return func(ctx context.Context, r *run, l *history.Log) error {
		from := r.now()
		stopErr := stop(ctx, r)
		r.srv.Kill() // nothing left to kill once stop did its work
		// A server asked to stop (SIGTERM, SHUTDOWN) may acknowledge
		// writes until it exits: they are lost with the rest.
		gone := r.now()
		sleep(ctx, outageFor)
		err := r.srv.Relaunch()
		r.record(history.Window{From: from, To: r.now()})
		r.reset(gone, nil)
		if err == nil {
			err = r.seed(ctx, l)
		}
		return errors.Join(stopErr, err)
	}
}

// flush loses every key with command (FLUSHALL, FLUSHDB, SWAPDB), a
// reset for the checker from when it is sent (any read after may see
// it) until it is acknowledged (any write before may be lost), and seeds
// Redis again.
func (r *run) flush(ctx context.Context, l *history.Log, command ...any) error {
	sent := r.now()
	err := r.admin.Do(ctx, command...).Err()
	r.mu.Lock()
	r.resets = append(r.resets, history.Reset{At: sent, Done: r.now()})
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return r.seed(ctx, l)
}

// killClients kills every client of the server rdb reaches but rdb's
// own connection: normal ones, the sessions' among them, and Pub/Sub ones.
func killClients(ctx context.Context, rdb redis.UniversalClient) error {
	if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		return err
	}
	return rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err()
}

// unanswered records an outage from from until now in which Redis kept
// its data but answered nothing: a hot read may serve its copy there,
// older than a write acknowledged just before (a stale read by design,
// judged for availability like any outage's).
func (r *run) unanswered(from time.Duration) {
	r.record(history.Window{From: from, To: r.now()})
}

// lost records an outage from from until now, in which the writes
// acknowledged before from may have been lost.
func (r *run) lost(from time.Duration) {
	r.record(history.Window{From: from, To: r.now()})
	r.reset(from, nil)
}

// SentinelFaults are the faults of a run with Config.Sentinel, in order:
// a planned switchover (see sentinelFailover), which loses no
// acknowledged write, connections killed on the new master, a switchover
// back, and the master's process killed, which the Sentinel turns into a
// failover two seconds later and which may lose the writes the replica
// had not received.
var SentinelFaults = []Fault{
	{Name: "SENTINEL FAILOVER", inject: sentinelFailover, lasts: sentinelFailoverFor},
	{Name: "CLIENT KILL all", inject: Faults[0].inject},
	{Name: "SENTINEL FAILOVER back", inject: sentinelFailover, lasts: sentinelFailoverFor},
	{Name: "SIGKILL the master", inject: func(ctx context.Context, r *run, l *history.Log) error {
		master, err := r.master(ctx)
		if err != nil {
			return err
		}
		from := r.now() // writes acknowledged before may be lost
		master.Kill()
		_, err = r.newMaster(ctx, master)
		r.lost(from)
		return err
	}},
}

// sentinelFailoverFor is about how long sentinelFailover takes: the
// Sentinel's previous failover to end (failover-timeout 1 s), then its
// promotion of the replica, about a second each.
const sentinelFailoverFor = 2500 * time.Millisecond

// sentinelFailover switches the master over the way an operator plans
// it, so that no acknowledged write is lost and what the run checks is the
// cache alone: writes are paused on the master, the replica catches up
// with every write the master acknowledged, the Sentinel promotes it, the
// old master is made a replica of the new one (what the Sentinel itself
// does only some seconds later), and the pause ends. Writes that waited
// through the pause then meet a replica and fail. Without the wait for
// the replica, a 10-minute soak lost the last ~50 writes the master
// acknowledged before the pause (replication lags on a busy machine), and
// every instance read them back 0.5–1.3 s "stale".
func sentinelFailover(ctx context.Context, r *run, _ *history.Log) error {
	sc := redis.NewSentinelClient(&redis.Options{Addr: r.sn.SentinelAddrs[0], MaxRetries: -1})
	defer sc.Close()
	if err := failoverDone(ctx, sc, r.sn.MasterName); err != nil {
		return err
	}
	old, err := r.master(ctx)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(&redis.Options{Addr: old.Addr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", 5000, "WRITE").Err(); err != nil {
		return err
	}
	defer rdb.Do(context.WithoutCancel(ctx), "CLIENT", "UNPAUSE")
	if err := caughtUp(ctx, rdb); err != nil {
		return err
	}
	if err := sc.Failover(ctx, r.sn.MasterName).Err(); err != nil {
		return err
	}
	srv, err := r.newMaster(ctx, old)
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(srv.Addr)
	return rdb.Do(ctx, "REPLICAOF", host, port).Err()
}

// failoverDone waits until the Sentinel has finished any failover of
// master name: asked for another while one is in progress, it answers
// -INPROG and the phase would go by without its fault.
func failoverDone(ctx context.Context, sc *redis.SentinelClient, name string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := sc.Master(ctx, name).Result()
		if err == nil && m["flags"] == "master" && m["failover-state"] == "" {
			return nil
		}
		if time.Now().After(deadline) || !sleep(ctx, 10*time.Millisecond) {
			return fmt.Errorf("soak: the Sentinel's failover of %s did not end within 10s: %v %v", name, m, err)
		}
	}
}

// caughtUp waits until every replica of the master rdb reaches has
// acknowledged its whole replication stream (ROLE: the master's offset,
// then each replica's).
func caughtUp(ctx context.Context, rdb *redis.Client) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		role, err := rdb.Do(ctx, "ROLE").Slice()
		if replicas, ok := item(role, 2).([]any); ok {
			offset := role[1]
			behind := len(replicas) == 0
			for _, rep := range replicas {
				if r, ok := rep.([]any); !ok || len(r) != 3 || fmt.Sprint(r[2]) != fmt.Sprint(offset) {
					behind = true
				}
			}
			if !behind {
				return nil
			}
		}
		if time.Now().After(deadline) || !sleep(ctx, time.Millisecond) {
			return fmt.Errorf("soak: the replicas of %s did not catch up within 5s: %v %v", rdb.Options().Addr, role, err)
		}
	}
}

// item returns s[i], nil when s is too short.
func item(s []any, i int) any {
	if i < len(s) {
		return s[i]
	}
	return nil
}

// master returns the server the Sentinel names master.
func (r *run) master(ctx context.Context) (*redistest.Server, error) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: r.sn.SentinelAddrs[0], MaxRetries: -1})
	defer sc.Close()
	addr, err := sc.GetMasterAddrByName(ctx, r.sn.MasterName).Result()
	if err != nil {
		return nil, err
	}
	for _, srv := range []*redistest.Server{r.sn.Master, r.sn.Replica} {
		if srv.Addr == net.JoinHostPort(addr[0], addr[1]) {
			return srv, nil
		}
	}
	return nil, fmt.Errorf("soak: the sentinel names %v master, which is neither server", addr)
}

// newMaster waits until the Sentinel names a master other than old and it
// answers as one.
func (r *run) newMaster(ctx context.Context, old *redistest.Server) (*redistest.Server, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if srv, err := r.master(ctx); err == nil && srv != old {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
			role, err := rdb.Do(ctx, "ROLE").Slice()
			rdb.Close()
			if err == nil && len(role) > 0 && role[0] == "master" {
				return srv, nil
			}
		}
		if time.Now().After(deadline) || !sleep(ctx, 20*time.Millisecond) {
			return nil, fmt.Errorf("soak: no new master within 10s of %s", old.Addr)
		}
	}
}

func goMaxProcs() int { return runtime.GOMAXPROCS(0) }
