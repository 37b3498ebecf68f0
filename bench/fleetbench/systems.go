package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	hk "github.com/hotkeygen/hotkeygen/runtime"
)

// An Instance is one pod of a service: its own connections to Redis and
// the system's client on them, as the service would build it at start.
type Instance interface {
	// Hold reads ids until the instance holds a local copy of each, or
	// ctx ends.
	Hold(ctx context.Context, ids []int64) error
	// Held returns how many of ids the instance holds a local copy of.
	// It is asked after the window, never inside it: for rueidis it reads
	// each key again, which Redis sees unless the copy is there.
	Held(ctx context.Context, ids []int64) (int, error)
	Close() error
}

// systemInfo describes one system fleetbench can run.
type systemInfo struct {
	ID   string // as -systems takes it
	Name string // as the table shows it
	New  func(ctx context.Context, t Target) (Instance, error)
	// Announced is the invalidation mode of a hotkeygen system that hears
	// only the repositories' own writes (Pub/Sub): the writer writes
	// through a repository of that mode. Empty for the others.
	Announced string
}

// defaultSystems are those -systems runs unless told: hotkeygen with its
// default invalidation beside the peers.
const defaultSystems = "hotkeygen,rueidis,csc,plain"

var systems = []systemInfo{
	{"hotkeygen", "hotkeygen", newHotkeygen(hk.InvalidateTracking), ""},
	{"hotkeygen-pubsub", "hotkeygen pubsub", newHotkeygen(hk.InvalidatePubSub), hk.InvalidatePubSub},
	{"hotkeygen-pubsub-keys", "hotkeygen pubsub-keys", newHotkeygen(hk.InvalidatePubSubKeys), hk.InvalidatePubSubKeys},
	{"rueidis", "rueidis", newRueidis, ""},
	{"csc", "go-redis CSC", newCSC, ""},
	{"plain", "go-redis plain", newPlain, ""},
}

func systemIDs() string {
	var ids []string
	for _, s := range systems {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ", ")
}

func pickSystems(list string) ([]systemInfo, error) {
	var out []systemInfo
	for id := range strings.SplitSeq(list, ",") {
		id = strings.TrimSpace(id)
		i := slices.IndexFunc(systems, func(s systemInfo) bool { return s.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("unknown system %q in -systems; the systems are %s", id, systemIDs())
		}
		out = append(out, systems[i])
	}
	return out, nil
}

// lookupSystem returns the system of id, for a child process.
func lookupSystem(id string) (systemInfo, error) {
	s, err := pickSystems(id)
	if err != nil {
		return systemInfo{}, err
	}
	return s[0], nil
}

// hotkeygenInstance is the repository generated from Item's annotation on
// a go-redis client of its own, with the runtime's defaults (see item.go)
// but for the invalidation mode.
type hotkeygenInstance struct {
	repo *ItemRepo
	rdb  redis.UniversalClient
}

// warnLog is the repositories' logger: promotions are logged at Info,
// one line per key and instance, thousands in a run.
var warnLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// readyWithin bounds how long an instance may take to start: hundreds
// of them dial at once on a machine that also runs the server.
const readyWithin = 60 * time.Second

func newHotkeygen(mode string) func(ctx context.Context, t Target) (Instance, error) {
	return func(ctx context.Context, t Target) (Instance, error) {
		rdb := t.client(nil)
		repo, err := NewItemRepo(rdb, hk.WithLogger(warnLog), hk.WithInvalidate(mode))
		if err != nil {
			rdb.Close()
			return nil, err
		}
		h := &hotkeygenInstance{repo: repo, rdb: rdb}
		if err := connect(ctx, rdb); err != nil {
			h.Close()
			return nil, fmt.Errorf("hotkeygen: connect: %w", err)
		}
		return h, nil
	}
}

// Hold reads ids in rounds, 10 ms apart, until every one has a local
// copy: with hot_qps=10 a key whose reads in one second reach 10 is
// promoted at that read, and the next read keeps the copy. A read that
// fails fast with ErrUnavailable (the instance's breaker opened: a
// crowded machine answered its PINGs late) is tried again in the next
// round, as a service's next request would.
func (h *hotkeygenInstance) Hold(ctx context.Context, ids []int64) error {
	var lastErr error
	// Held and vouched for: the first copy of a node's key starts the
	// node's session, which then vouches for it.
	for st := h.repo.Stats(); st.LocalSize < len(ids) || st.InvalidationLive == 0; st = h.repo.Stats() {
		for _, id := range ids {
			if _, err := h.repo.GetItem(ctx, id); err != nil {
				if !errors.Is(err, hk.ErrUnavailable) || ctx.Err() != nil {
					return fmt.Errorf("hotkeygen: read %s: %w", ItemKey(id), err)
				}
				lastErr = err
				break
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("hotkeygen: %d of %d keys held when the time to hold them ran out (last failed read: %v): %w", h.repo.Stats().LocalSize, len(ids), lastErr, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

func (h *hotkeygenInstance) Held(context.Context, []int64) (int, error) {
	return h.repo.Stats().LocalSize, nil
}

func (h *hotkeygenInstance) Close() error { return errors.Join(h.repo.Close(), h.rdb.Close()) }

// rueidisInstance is a rueidis client with its default options, which
// turn on CLIENT TRACKING OPTIN on every connection, every read a DoCache
// of GET: the copy lives until Redis announces a write of the key, or
// rueidisTTL.
type rueidisInstance struct{ c rueidis.Client }

// rueidisTTL is the local TTL of rueidis's copies: longer than any
// scenario, so that copies go only by invalidation.
const rueidisTTL = time.Hour

func newRueidis(ctx context.Context, t Target) (Instance, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: slices.Clone(t.Addrs)})
	if err != nil {
		return nil, fmt.Errorf("rueidis: %w", err)
	}
	return &rueidisInstance{c: c}, nil
}

func (r *rueidisInstance) get(ctx context.Context, id int64) rueidis.RedisResult {
	return r.c.DoCache(ctx, r.c.B().Get().Key(ItemKey(id)).Cache(), rueidisTTL)
}

func (r *rueidisInstance) Hold(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		if err := r.get(ctx, id).Error(); err != nil {
			return fmt.Errorf("rueidis: read %s: %w", ItemKey(id), err)
		}
	}
	return nil
}

// Held reads each key again and counts the reads served from the copy.
func (r *rueidisInstance) Held(ctx context.Context, ids []int64) (int, error) {
	n := 0
	for _, id := range ids {
		res := r.get(ctx, id)
		if err := res.Error(); err != nil {
			return 0, fmt.Errorf("rueidis: read %s: %w", ItemKey(id), err)
		}
		if res.IsCacheHit() {
			n++
		}
	}
	return n, nil
}

func (r *rueidisInstance) Close() error {
	r.c.Close()
	return nil
}

// cscInstance is go-redis's own client-side cache
// (Options.ClientSideCacheConfig, RESP3 and CLIENT TRACKING,
// experimental in go-redis v9.23): every GET's reply is kept until Redis
// announces a write of its key.
type cscInstance struct{ rdb redis.UniversalClient }

// cscEntries is the cache's size, the runtime's default local_size: the
// instances hold ten keys.
const cscEntries = hk.DefaultLocalSize

func newCSC(ctx context.Context, t Target) (Instance, error) {
	rdb := t.client(func(o *redis.Options) {
		o.Protocol = 3
		o.ClientSideCacheConfig = &redis.ClientSideCacheConfig{MaxEntries: cscEntries}
	})
	if err := connect(ctx, rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("go-redis CSC: connect: %w", err)
	}
	return &cscInstance{rdb: rdb}, nil
}

func (c *cscInstance) Hold(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		if err := c.rdb.Get(ctx, ItemKey(id)).Err(); err != nil {
			return fmt.Errorf("go-redis CSC: read %s: %w", ItemKey(id), err)
		}
	}
	return nil
}

// Held is the cache's entry count, summed over a cluster's nodes: the
// instance caches nothing but ids.
func (c *cscInstance) Held(ctx context.Context, _ []int64) (int, error) {
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		var n atomic.Int64
		err := cc.ForEachShard(ctx, func(_ context.Context, node *redis.Client) error {
			n.Add(int64(node.CSCStats().Entries))
			return nil
		})
		return int(n.Load()), err
	}
	return c.rdb.(*redis.Client).CSCStats().Entries, nil
}

func (c *cscInstance) Close() error { return c.rdb.Close() }

// plainInstance is go-redis with no local cache: the floor, a service
// that holds no copy and so costs an idle node nothing but its
// connection.
type plainInstance struct{ rdb redis.UniversalClient }

func newPlain(ctx context.Context, t Target) (Instance, error) {
	rdb := t.client(nil)
	if err := connect(ctx, rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("go-redis: connect: %w", err)
	}
	return &plainInstance{rdb: rdb}, nil
}

func (p *plainInstance) Hold(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		if err := p.rdb.Get(ctx, ItemKey(id)).Err(); err != nil {
			return fmt.Errorf("go-redis: read %s: %w", ItemKey(id), err)
		}
	}
	return nil
}

func (p *plainInstance) Held(context.Context, []int64) (int, error) { return 0, nil }

func (p *plainInstance) Close() error { return p.rdb.Close() }
