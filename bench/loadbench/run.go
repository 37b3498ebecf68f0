package main

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	hk "github.com/hotkeygen/hotkeygen/runtime"
)

// Config is what stays the same across every system and workload of a run.
type Config struct {
	Addr       string        `json:"addr"`
	Keys       int64         `json:"keys"`
	Theta      float64       `json:"theta"`
	Local      int           `json:"local"`
	Workers    int           `json:"workers"`
	Seed       uint64        `json:"seed"`
	Payload    int           `json:"payload"`        // bytes of Item.Payload
	StaleBound time.Duration `json:"stale_bound_ns"` // staleness a system with invalidation may show
}

// Bench drives workloads through systems against one Redis.
type Bench struct {
	cfg     Config
	admin   *redis.Client // the harness's own connection: preload and INFO
	zipf    *Zipf
	payload string
}

// NewBench connects to the Redis at cfg.Addr.
func NewBench(ctx context.Context, cfg Config) (*Bench, error) {
	admin := redis.NewClient(&redis.Options{Addr: cfg.Addr, PoolSize: 1})
	if err := admin.Ping(ctx).Err(); err != nil {
		admin.Close()
		return nil, fmt.Errorf("redis at %s: %w", cfg.Addr, err)
	}
	return &Bench{cfg: cfg, admin: admin, zipf: NewZipf(cfg.Keys, cfg.Theta), payload: strings.Repeat("p", cfg.Payload)}, nil
}

// Close closes the harness's connection.
func (b *Bench) Close() error { return b.admin.Close() }

// worker is one goroutine's share of the load and of the figures; nothing
// in it is shared while the load runs.
type worker struct {
	hist                  *hdrhistogram.Histogram // read latency, ns
	offered               []uint32                // reads per key
	timeline              []uint32                // reads per timeStep since the start
	reads, writes, errors uint64
	lastErr               error
}

// sample is what one run of a system under a workload measured. The runs
// of several rounds add up (add) into one Result.
type sample struct {
	elapsed               time.Duration
	hist                  *hdrhistogram.Histogram // read latency, ns
	offered, atRedis      []uint64                // reads per item ID: by the workers, and at Redis
	calls                 map[string]uint64       // commands Redis executed
	reads, writes, errors uint64
	lastErr               error
	stale, beyond         uint64
	longest               time.Duration
	heap                  int64
	extras                map[string]float64
	crowd                 []CrowdKey
	timeline              [][]uint64 // per round: reads per timeStep
}

// timeStep is the resolution of the reads timeline in the JSON output,
// which shows warm-up, stalls and what a flash crowd does to throughput.
const timeStep = 100 * time.Millisecond

// Run drives w through the system for w.Duration and measures it. Every
// run starts from the same data: all keys at version 0.
func (b *Bench) Run(ctx context.Context, si systemInfo, w *Workload, round int) (*sample, error) {
	if err := b.preload(ctx); err != nil {
		return nil, err
	}
	kc := NewKeyCounter(b.cfg.Keys)
	sys, err := si.New(Setup{Addr: b.cfg.Addr, Local: b.cfg.Local, Payload: b.cfg.Payload, Keys: kc})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", si.Name, err)
	}
	// Count from here: what preloading and setting up cost is not the
	// system's steady work.
	if err := b.admin.ConfigResetStat(ctx).Err(); err != nil {
		sys.Close()
		return nil, err
	}
	kc.Take()
	stale := NewStaleness(b.cfg.Keys, b.cfg.StaleBound)

	start := time.Now()
	deadline := start.Add(w.Duration)
	var crowd *crowdWatch
	if hs, ok := sys.(interface{ Stats() hk.Stats }); ok && w.Crowd != nil {
		crowd = watchCrowd(w.Crowd, start, deadline, hs.Stats)
	}
	workers := make([]*worker, b.cfg.Workers)
	var wg sync.WaitGroup
	for i := range workers {
		wk := &worker{hist: newHist(), offered: make([]uint32, b.cfg.Keys), timeline: make([]uint32, w.Duration/timeStep+1)}
		workers[i] = wk
		p := newPicker(w, b.zipf, b.cfg.Seed, i, start)
		wg.Go(func() { b.drive(ctx, sys, stale, p, wk, start, deadline) })
	}
	wg.Wait()
	s := &sample{elapsed: time.Since(start), hist: newHist(), offered: make([]uint64, b.cfg.Keys), timeline: [][]uint64{make([]uint64, w.Duration/timeStep+1)}}
	if crowd != nil {
		s.crowd = crowd.stop()
	}
	if s.calls, err = commandCalls(ctx, b.admin); err != nil {
		sys.Close()
		return nil, err
	}
	s.atRedis = kc.Take()
	if ef, ok := sys.(extraFigures); ok {
		s.extras = ef.extras()
	}
	// The system's heap: what freeing it gives back.
	held := heapAfterGC()
	if err := sys.Close(); err != nil {
		return nil, fmt.Errorf("%s: close: %w", si.Name, err)
	}
	sys = nil
	s.heap = int64(held) - int64(heapAfterGC())

	for _, wk := range workers {
		s.hist.Merge(wk.hist)
		s.reads += wk.reads
		s.writes += wk.writes
		s.errors += wk.errors
		if wk.lastErr != nil {
			s.lastErr = wk.lastErr
		}
		for id, n := range wk.offered {
			s.offered[id] += uint64(n)
		}
		for i, n := range wk.timeline {
			s.timeline[0][i] += uint64(n)
		}
	}
	for i := range s.crowd {
		k := &s.crowd[i]
		id := itemID(k.Key)
		k.Round, k.Offered, k.AtRedis = round, s.offered[id], s.atRedis[id]
	}
	s.stale, s.beyond, s.longest = stale.StaleCounts()
	return s, nil
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(10*time.Second), 3) }

// add merges o, another round of the same system and workload, into s.
func (s *sample) add(o *sample) {
	s.elapsed += o.elapsed
	s.hist.Merge(o.hist)
	for id := range s.offered {
		s.offered[id] += o.offered[id]
		s.atRedis[id] += o.atRedis[id]
	}
	for c, n := range o.calls {
		s.calls[c] += n
	}
	s.reads += o.reads
	s.writes += o.writes
	s.errors += o.errors
	if o.lastErr != nil {
		s.lastErr = o.lastErr
	}
	s.stale += o.stale
	s.beyond += o.beyond
	s.longest = max(s.longest, o.longest)
	s.heap = max(s.heap, o.heap)
	s.extras = o.extras
	s.crowd = append(s.crowd, o.crowd...)
	s.timeline = append(s.timeline, o.timeline...)
}

// drive runs one worker's operations until the deadline.
func (b *Bench) drive(ctx context.Context, sys System, stale *Staleness, p *picker, wk *worker, start, deadline time.Time) {
	now := time.Now()
	for now.Before(deadline) {
		id, write := p.next(now)
		if write {
			err := stale.Write(id, func(v int64) error {
				return sys.Set(ctx, &Item{ID: id, Version: v, Payload: b.payload})
			})
			wk.writes++
			if err != nil {
				wk.errors++
				wk.lastErr = err
			}
			now = time.Now()
			continue
		}
		acked := stale.Before(id)
		t0 := time.Now()
		v, err := sys.Get(ctx, id)
		now = time.Now()
		if err != nil {
			wk.errors++
			wk.lastErr = err
			if ctx.Err() != nil {
				return // interrupted
			}
			continue
		}
		wk.hist.RecordValue(int64(now.Sub(t0)))
		wk.reads++
		wk.offered[id]++
		wk.timeline[min(int(now.Sub(start)/timeStep), len(wk.timeline)-1)]++ // the last read may end past the deadline
		stale.Observe(id, acked, v.Version, t0)
	}
}

// preload writes every key at version 0, as plain msgpack of Item, which
// is what every system reads and writes.
func (b *Bench) preload(ctx context.Context) error {
	const batch = 1000
	for lo := int64(0); lo < b.cfg.Keys; lo += batch {
		pipe := b.admin.Pipeline()
		for id := lo; id < min(lo+batch, b.cfg.Keys); id++ {
			v, err := msgpack.Marshal(&Item{ID: id, Payload: b.payload})
			if err != nil {
				return err
			}
			pipe.Set(ctx, ItemKey(id), v, ttl)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
	}
	return nil
}

// commandCalls reads INFO commandstats: calls per command since the last
// CONFIG RESETSTAT, leaving out INFO and CONFIG, which only the harness
// sends.
func commandCalls(ctx context.Context, admin *redis.Client) (map[string]uint64, error) {
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	calls := map[string]uint64{}
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		if name == "info" || strings.HasPrefix(name, "config") {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		if c, err := strconv.ParseUint(n, 10, 64); err == nil {
			calls[name] = c
		}
	}
	return calls, nil
}

func heapAfterGC() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// itemID is the inverse of ItemKey; -1 for another key.
func itemID(key string) int64 {
	s, ok := strings.CutPrefix(key, "item:")
	if !ok {
		return -1
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return id
}
