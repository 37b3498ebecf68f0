package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Everything fleetbench reports is read at the node, from INFO, and
// nothing from the clients: what a fleet costs Redis is what Redis says it
// spent, including the work a client cannot see (invalidation messages
// fanned out to every tracking connection, replies to PINGs the client
// library sends by itself).

// Info is one INFO reply, parsed. Fields holds every "name:value" line of
// every section but commandstats, whose lines go to Calls: a server that
// writes a field twice keeps the last, and a line that is neither is
// skipped, so no reply, however malformed, makes parsing fail.
type Info struct {
	Fields map[string]string
	// Calls holds the calls field of each cmdstat_ line, by command
	// name as the server writes it ("ping", "client|tracking").
	Calls map[string]uint64
}

// ParseInfo parses the text of an INFO reply.
func ParseInfo(text string) Info {
	info := Info{Fields: map[string]string{}, Calls: map[string]uint64{}}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			continue
		}
		if cmd, ok := strings.CutPrefix(name, "cmdstat_"); ok {
			if calls, ok := cmdstatCalls(value); ok && cmd != "" {
				info.Calls[cmd] = calls
			}
			continue
		}
		info.Fields[name] = value
	}
	return info
}

// cmdstatCalls returns the calls of a cmdstat_ value,
// "calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0".
func cmdstatCalls(value string) (uint64, bool) {
	for kv := range strings.SplitSeq(value, ",") {
		if v, ok := strings.CutPrefix(kv, "calls="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Float returns the field name as a number, and whether it is there and
// is one.
func (i Info) Float(name string) (float64, bool) {
	v, ok := i.Fields[name]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// Snapshot is what fleetbench reads of a node at one moment.
type Snapshot struct {
	Addr string
	At   time.Time
	// CPU is used_cpu_sys + used_cpu_user, in seconds: every thread of
	// the server (I/O threads, background deletes). MainCPU is the same of
	// the main thread, where commands run and replies are written
	// (Redis 6.2 on); HasMain says whether the server reports it.
	CPU, MainCPU float64
	HasMain      bool
	Commands     uint64 // total_commands_processed
	NetIn        uint64 // total_net_input_bytes
	NetOut       uint64 // total_net_output_bytes
	Clients      int    // connected_clients
	Calls        map[string]uint64
}

// maxCounter bounds the figures a snapshot takes, so that a reply with a
// figure of 1e300 fails instead of wrapping around in a conversion.
const maxCounter = 1 << 62

// snapshotOf takes the figures of a parsed INFO reply. It fails only when
// a figure every server since Redis 2.6 reports is missing or is not a
// number: a reply without them is not INFO of a Redis.
func snapshotOf(addr string, at time.Time, info Info) (Snapshot, error) {
	var missing []string
	need := func(name string) float64 {
		v, ok := info.Float(name)
		if !ok || v < 0 || v > maxCounter {
			missing = append(missing, name)
		}
		return v
	}
	s := Snapshot{
		Addr:     addr,
		At:       at,
		CPU:      need("used_cpu_sys") + need("used_cpu_user"),
		Commands: uint64(need("total_commands_processed")),
		NetIn:    uint64(need("total_net_input_bytes")),
		NetOut:   uint64(need("total_net_output_bytes")),
		Clients:  int(need("connected_clients")),
		Calls:    info.Calls,
	}
	if len(missing) > 0 {
		return Snapshot{}, fmt.Errorf("INFO of %s lacks %s, or they are not numbers: is it a Redis (or Valkey) server? fleetbench needs the cpu, stats, clients and commandstats sections", addr, strings.Join(missing, ", "))
	}
	sys, ok1 := info.Float("used_cpu_sys_main_thread")
	user, ok2 := info.Float("used_cpu_user_main_thread")
	if ok1 && ok2 {
		s.MainCPU, s.HasMain = sys+user, true
	}
	return s, nil
}

// Delta is what a node did between two snapshots.
type Delta struct {
	Addr     string
	Seconds  float64
	CPU      float64 // seconds
	MainCPU  float64 // seconds; valid when HasMain
	HasMain  bool
	Commands uint64
	NetIn    uint64
	NetOut   uint64
	Clients  int // connected_clients at the end
	Calls    map[string]uint64
}

// Sub returns what the node did from before to s. Counters that went
// backwards mean the server restarted or ran CONFIG RESETSTAT in
// between, which leaves nothing to measure.
func (s Snapshot) Sub(before Snapshot) (Delta, error) {
	if s.Commands < before.Commands || s.NetIn < before.NetIn || s.NetOut < before.NetOut || s.CPU < before.CPU {
		return Delta{}, fmt.Errorf("the counters of %s went backwards during the window: the server restarted or someone ran CONFIG RESETSTAT; run again", s.Addr)
	}
	d := Delta{
		Addr:     s.Addr,
		Seconds:  s.At.Sub(before.At).Seconds(),
		CPU:      s.CPU - before.CPU,
		HasMain:  s.HasMain && before.HasMain,
		Commands: s.Commands - before.Commands,
		NetIn:    s.NetIn - before.NetIn,
		NetOut:   s.NetOut - before.NetOut,
		Clients:  s.Clients,
		Calls:    map[string]uint64{},
	}
	if d.HasMain {
		d.MainCPU = s.MainCPU - before.MainCPU
	}
	for cmd, n := range s.Calls {
		if b := before.Calls[cmd]; n > b {
			d.Calls[cmd] = n - b
		}
	}
	return d, nil
}

// Node is one Redis server fleetbench measures, through a connection of
// its own. Each Read is one INFO command, which the node counts among
// its commands: the results take it out (harnessInfos).
type Node struct {
	Addr string
	rdb  *redis.Client
}

// harnessInfos is how many INFO commands fleetbench sends a node inside
// one window: the first snapshot's, counted by the node once it has run,
// so it shows in the second snapshot but not in the first.
const harnessInfos = 1

func newNode(addr string) *Node {
	return &Node{Addr: addr, rdb: redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1})}
}

// Read takes a snapshot of the node: one INFO all, so every figure of a
// snapshot is of the same instant.
func (n *Node) Read(ctx context.Context) (Snapshot, error) {
	text, err := n.rdb.Info(ctx, "all").Result()
	if err != nil {
		return Snapshot{}, fmt.Errorf("INFO all on %s: %w", n.Addr, err)
	}
	return snapshotOf(n.Addr, time.Now(), ParseInfo(text))
}

// Field returns one field of INFO section of the node, "" when absent.
func (n *Node) Field(ctx context.Context, section, field string) (string, error) {
	text, err := n.rdb.Info(ctx, section).Result()
	if err != nil {
		return "", fmt.Errorf("INFO %s on %s: %w", section, n.Addr, err)
	}
	return strings.TrimSpace(ParseInfo(text).Fields[field]), nil
}

// ensureMaxClients raises the node's maxclients to want when it is lower:
// the default 10,000 is short of 256 instances of a system that holds a
// dozen connections to each node. redis-server raises its own file
// limit to fit, within the hard limit it inherited.
func (n *Node) ensureMaxClients(ctx context.Context, want int) error {
	cur, err := n.rdb.ConfigGet(ctx, "maxclients").Result()
	if err != nil {
		return fmt.Errorf("CONFIG GET maxclients on %s: %w", n.Addr, err)
	}
	if have, err := strconv.Atoi(cur["maxclients"]); err == nil && have >= want {
		return nil
	}
	if err := n.rdb.ConfigSet(ctx, "maxclients", strconv.Itoa(want)).Err(); err != nil {
		return fmt.Errorf("CONFIG SET maxclients %d on %s: %w (raise it by hand, or the file limit redis-server runs under)", want, n.Addr, err)
	}
	return nil
}

func (n *Node) Close() error { return n.rdb.Close() }
