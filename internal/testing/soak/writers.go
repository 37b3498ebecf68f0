package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
)

// writer is who writes hot keys: instance inst's repository, or another
// program (-1), through set.
type writer struct {
	inst int
	set  func(ctx context.Context, id, version int64) error
	// ttl is the expiry set gives the keys it writes, for the checker; 0
	// when none, or none that runs out within a run.
	ttl time.Duration
}

// seed writes every hot key, recording the writes: at the start, and
// after Redis lost its data.
func (r *run) seed(ctx context.Context, l *history.Log) error {
	deadline := time.Now().Add(2 * time.Second) // a repository may still fail fast for a moment
	for id := 1; id <= r.cfg.Keys; id++ {
		for {
			err := r.writeOne(ctx, l, r.seeder, int64(id))
			if err == nil {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("soak: seed: %w", err)
			}
			sleep(ctx, 10*time.Millisecond)
		}
	}
	return nil
}

// write writes a random hot key every 5 ms as w, but none a fault holds;
// every 20 ms with a database, whose writes each cost a load (Config.Database).
func (r *run) write(ctx context.Context, l *history.Log, w writer) {
	every := 5 * time.Millisecond
	if r.cfg.Database {
		every = 20 * time.Millisecond
	}
	for sleep(ctx, every) {
		id := int64(1 + rand.IntN(r.cfg.Keys))
		r.locks[id].Lock()
		if !r.held[id] {
			r.writeLocked(ctx, l, w, id)
		}
		r.locks[id].Unlock()
	}
}

// writeOne writes hot key id as w, once the write in flight is over.
func (r *run) writeOne(ctx context.Context, l *history.Log, w writer, id int64) error {
	r.locks[id].Lock()
	defer r.locks[id].Unlock()
	return r.writeLocked(ctx, l, w, id)
}

func (r *run) writeLocked(ctx context.Context, l *history.Log, w writer, id int64) error {
	v := r.version.Add(1)
	start := r.now()
	err := w.set(ctx, id, v)
	if ctx.Err() != nil && err != nil {
		return err
	}
	l.Add(history.Op{Kind: history.Write, Instance: w.inst, Key: id, Version: v, Start: start, End: r.now(), TTL: w.ttl, Failed: err != nil})
	return err
}

// hold keeps the random writers off keys ids until release, from the
// moment the write of each in flight is over: a fault that must know what
// Redis holds for them.
func (r *run) hold(ids []int64) { r.setHeld(ids, true) }

func (r *run) release(ids []int64) { r.setHeld(ids, false) }

func (r *run) setHeld(ids []int64, held bool) {
	for _, id := range ids {
		r.locks[id].Lock()
		r.held[id] = held
		r.locks[id].Unlock()
	}
}
