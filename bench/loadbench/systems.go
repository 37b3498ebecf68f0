package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/go-redis/cache/v9"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	hk "github.com/hotkeygen/hotkeygen/runtime"
)

// A System is one way of keeping Items in Redis, under test. Reads go
// through one instance and writes through a second one with its own
// connections, as two replicas of a service would: a write must reach the
// reader's local copy through whatever invalidation the system has, not
// because the reader made it itself.
type System interface {
	Get(ctx context.Context, id int64) (*Item, error)
	// Set writes v through the writer instance.
	Set(ctx context.Context, v *Item) error
	Close() error
}

// Setup is what every system is built from.
type Setup struct {
	Addr    string
	Local   int         // local cache entries
	Payload int         // bytes of Item.Payload, for caches sized in bytes
	Keys    *KeyCounter // watches every client's connections, to count reads reaching Redis
}

// systemInfo describes one system the harness can run.
type systemInfo struct {
	ID   string // as -systems takes it
	Name string // as the table shows it
	New  func(Setup) (System, error)
}

var systems = []systemInfo{
	{"redis", "go-redis", newPlain},
	{"cache", "go-redis/cache", newGoCache},
	{"csc", "go-redis CSC", newCSC},
	{"rueidis", "rueidis", newRueidis},
	{"hotkeygen", "hotkeygen", func(s Setup) (System, error) { return newHotkeygen(s) }},
	{"hotkeygen-pool", "hotkeygen (pool)", func(s Setup) (System, error) { return newHotkeygen(s, hk.WithAutoPipeline(false)) }},
}

func (s Setup) client(opt redis.Options) *redis.Client {
	opt.Addr = s.Addr
	rdb := redis.NewClient(&opt)
	if s.Keys != nil {
		rdb.AddHook(s.Keys.Hook())
	}
	return rdb
}

// plain is go-redis v9 with no local cache: every read is a GET and a
// msgpack decode. It is the baseline every cache should beat.
type plain struct{ r, w *redis.Client }

func newPlain(s Setup) (System, error) {
	return &plain{r: s.client(redis.Options{}), w: s.client(redis.Options{})}, nil
}

func (p *plain) Get(ctx context.Context, id int64) (*Item, error) {
	return getDecode(ctx, p.r, id)
}

func (p *plain) Set(ctx context.Context, v *Item) error { return setEncode(ctx, p.w, v) }

func (p *plain) Close() error { return errors.Join(p.r.Close(), p.w.Close()) }

func getDecode(ctx context.Context, rdb *redis.Client, id int64) (*Item, error) {
	b, err := rdb.Get(ctx, ItemKey(id)).Bytes()
	if err != nil {
		return nil, err
	}
	return decodeItem(b)
}

func decodeItem(b []byte) (*Item, error) {
	v := new(Item)
	return v, msgpack.Unmarshal(b, v)
}

// ttl is the Redis expiry every system writes with: the annotation's.
const ttl = time.Hour

func setEncode(ctx context.Context, rdb *redis.Client, v *Item) error {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return err
	}
	return rdb.Set(ctx, ItemKey(v.ID), b, ttl).Err()
}

// goCache is github.com/go-redis/cache/v9 with its TinyLFU local cache. Its
// local copies are never told of writes made elsewhere: they live until
// their local TTL. It stores plain msgpack (its own default would
// compress values over 64 bytes with s2), so every system reads the same
// bytes.
type goCache struct {
	r, w   *cache.Cache
	rr, wr *redis.Client
}

// localTTL is how long the caches that take one keep a local copy:
// go-redis/cache's and rueidis's READMEs both use a minute.
const localTTL = time.Minute

func newGoCache(s Setup) (System, error) {
	g := &goCache{rr: s.client(redis.Options{}), wr: s.client(redis.Options{})}
	mk := func(rdb *redis.Client) *cache.Cache {
		return cache.New(&cache.Options{
			Redis:      rdb,
			LocalCache: cache.NewTinyLFU(s.Local, localTTL),
			Marshal:    msgpack.Marshal,
			Unmarshal:  msgpack.Unmarshal,
		})
	}
	g.r, g.w = mk(g.rr), mk(g.wr)
	return g, nil
}

func (g *goCache) Get(ctx context.Context, id int64) (*Item, error) {
	v := new(Item)
	return v, g.r.Get(ctx, ItemKey(id), v)
}

func (g *goCache) Set(ctx context.Context, v *Item) error {
	return g.w.Set(&cache.Item{Ctx: ctx, Key: ItemKey(v.ID), Value: v, TTL: ttl})
}

func (g *goCache) Close() error { return errors.Join(g.rr.Close(), g.wr.Close()) }

// csc is go-redis's own client-side cache (Options.ClientSideCacheConfig,
// RESP3 and CLIENT TRACKING, experimental in go-redis v9.23): every GET
// result is cached, up to Local entries, until Redis announces a write.
type csc struct{ r, w *redis.Client }

func newCSC(s Setup) (System, error) {
	opt := redis.Options{Protocol: 3, ClientSideCacheConfig: &redis.ClientSideCacheConfig{MaxEntries: s.Local}}
	c := &csc{r: s.client(opt), w: s.client(opt)}
	return c, nil
}

func (c *csc) Get(ctx context.Context, id int64) (*Item, error) { return getDecode(ctx, c.r, id) }

func (c *csc) Set(ctx context.Context, v *Item) error { return setEncode(ctx, c.w, v) }

func (c *csc) Close() error { return errors.Join(c.r.Close(), c.w.Close()) }

// hotkeygen is the repository generated from Item's annotation, with the
// runtime's defaults but for the local budget.
type hotkeygen struct {
	r, w   *ItemRepo
	rr, wr *redis.Client
}

// newHotkeygen makes the system with extra options: hotkeygen (pool) is
// hotkeygen with every read through the pool, and hotkeygen (pipeline)
// (piped.go) with every read of one key on the automatic pipeline, the
// two ways the runtime's lane chooses between, measured beside it in the
// same run.
func newHotkeygen(s Setup, extra ...hk.Option) (System, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := append([]hk.Option{
		hk.WithLocalSize(s.Local),
		hk.WithTopN(min(annotatedTopN, s.Local)), // top_n may not exceed local_size
		hk.WithLogger(log),                       // promotions are logged at Info: thousands of lines
	}, extra...)
	h := &hotkeygen{rr: s.client(redis.Options{}), wr: s.client(redis.Options{})}
	var err error
	if h.r, err = NewItemRepo(h.rr, opts...); err == nil {
		if h.w, err = NewItemRepo(h.wr, opts...); err != nil {
			h.r.Close()
		}
	}
	if err != nil {
		return nil, errors.Join(err, h.rr.Close(), h.wr.Close())
	}
	return h, nil
}

// annotatedTopN is top_n in Item's annotation.
const annotatedTopN = 200

func (h *hotkeygen) Get(ctx context.Context, id int64) (*Item, error) { return h.r.GetItem(ctx, id) }

func (h *hotkeygen) Set(ctx context.Context, v *Item) error { return h.w.SetItem(ctx, v) }

// Stats reports the reading instance's figures.
func (h *hotkeygen) Stats() hk.Stats { return h.r.Stats() }

func (h *hotkeygen) Close() error {
	return errors.Join(h.r.Close(), h.w.Close(), h.rr.Close(), h.wr.Close())
}

// extras returns the figures a system reports about itself, for the JSON
// output; only the systems that keep such figures implement it.
type extraFigures interface{ extras() map[string]float64 }

func (c *csc) extras() map[string]float64 {
	st := c.r.CSCStats()
	return map[string]float64{
		"csc_hits":         float64(st.Hits),
		"csc_misses":       float64(st.Misses),
		"csc_entries":      float64(st.Entries),
		"csc_memory_bytes": float64(st.MemoryUsageBytes),
	}
}

func (h *hotkeygen) extras() map[string]float64 {
	st := h.r.Stats()
	return map[string]float64{
		"hot_keys":          float64(len(st.HotKeys)),
		"hot_hit_rate":      st.HitRate,
		"hot_traffic_share": st.TrafficShare,
		"local_values":      float64(st.LocalSize),
		"local_bytes":       float64(st.LocalBytes),
		"recorder_keys":     float64(st.RecorderSize),
		"promotions":        float64(st.Promotions),
		"demotions":         float64(st.Demotions),
		"invalidations":     float64(st.Invalidations),
		"refreshes":         float64(st.Refreshes),
	}
}
