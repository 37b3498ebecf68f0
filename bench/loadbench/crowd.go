package main

import (
	"cmp"
	"slices"
	"sync"
	"time"

	hk "github.com/hotkeygen/hotkeygen/runtime"
)

// CrowdKey is how hotkeygen followed one key of a flash crowd.
type CrowdKey struct {
	Round int    `json:"round"`
	Phase int    `json:"phase"`
	Key   string `json:"key"`
	// PromotedMs is from the crowd's start to the key's promotion
	// (HotKey.Since); -1 if it was never promoted.
	PromotedMs float64 `json:"promoted_ms"`
	// FirstHitMs is from the crowd's start to the first poll of Stats that
	// saw a local hit of the key: an upper bound, within the poll interval,
	// of the first local hit. -1 if none was seen.
	FirstHitMs float64 `json:"first_hit_ms"`
	// DemotedMs is from the crowd cooling (the next one starting) to the
	// first poll that no longer saw the key hot; -1 if it was still hot
	// when the run ended, or its crowd never cooled.
	DemotedMs float64 `json:"demoted_ms"`
	// Offered and AtRedis are the key's reads by the workers and the reads
	// of it that reached Redis, over the whole round.
	Offered uint64 `json:"offered"`
	AtRedis uint64 `json:"at_redis"`

	wasHot bool
}

// crowdPoll is how often the watcher reads Stats: the resolution of the
// first-hit and demotion figures. Stats encodes every local value to
// report their size, about 0.1 ms for 200 values, so polling costs well
// under 1% of a core.
const crowdPoll = 20 * time.Millisecond

// crowdWatch polls a hotkeygen repository's Stats during a flash crowd and
// times, for each crowd's keys, promotion, first local hit and demotion.
type crowdWatch struct {
	f        *FlashCrowd
	start    time.Time
	deadline time.Time
	stats    func() hk.Stats
	keys     map[string]*CrowdKey
	phases   int // phases whose keys are in keys
	done     chan struct{}
	wg       sync.WaitGroup
}

func watchCrowd(f *FlashCrowd, start, deadline time.Time, stats func() hk.Stats) *crowdWatch {
	w := &crowdWatch{f: f, start: start, deadline: deadline, stats: stats, keys: map[string]*CrowdKey{}, done: make(chan struct{})}
	w.wg.Go(w.run)
	return w
}

func (w *crowdWatch) run() {
	t := time.NewTicker(crowdPoll)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			w.poll()
		}
	}
}

func (w *crowdWatch) poll() {
	st := w.stats()
	now := time.Now() // after Stats: a hit it shows happened before now
	if now.After(w.deadline) {
		return
	}
	for ph := w.f.Phase(now.Sub(w.start)); w.phases <= ph; w.phases++ {
		for _, id := range w.f.Members(w.phases) {
			k := ItemKey(id)
			w.keys[k] = &CrowdKey{Phase: w.phases, Key: k, PromotedMs: -1, FirstHitMs: -1, DemotedMs: -1}
		}
	}
	hot := map[string]hk.HotKey{}
	for _, h := range st.HotKeys {
		hot[h.Key] = h
	}
	for _, k := range w.keys {
		began := w.start.Add(time.Duration(k.Phase) * w.f.Every)
		cooled := began.Add(w.f.Every)
		h, isHot := hot[k.Key]
		switch {
		case isHot:
			k.wasHot = true
			if k.PromotedMs < 0 {
				k.PromotedMs = ms(max(0, h.Since.Sub(began)))
			}
			if k.FirstHitMs < 0 && h.Hits > 0 {
				k.FirstHitMs = ms(now.Sub(began))
			}
		case k.wasHot && k.DemotedMs < 0 && now.After(cooled):
			k.DemotedMs = ms(now.Sub(cooled))
		}
	}
}

// stop ends the polling and returns the keys, by phase.
func (w *crowdWatch) stop() []CrowdKey {
	close(w.done)
	w.wg.Wait()
	out := make([]CrowdKey, 0, len(w.keys))
	for _, k := range w.keys {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b CrowdKey) int {
		if a.Phase != b.Phase {
			return a.Phase - b.Phase
		}
		return cmp.Compare(itemID(a.Key), itemID(b.Key))
	})
	return out
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
