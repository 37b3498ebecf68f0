package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A Fleet is N instances of one system: in this process (-mode inproc),
// or spread over child processes (-mode procs), which is closer to N pods
// but costs a process each.
type Fleet interface {
	// Hold has every instance hold a local copy of each of heldIDs.
	Hold(ctx context.Context) error
	// Held returns the copies of heldIDs the instances hold, summed.
	Held(ctx context.Context) (int, error)
	Close() error
}

// heldIDs are the keys the instances hold: item:1 to item:10, the
// annotation's top_n.
var heldIDs = func() []int64 {
	ids := make([]int64, annotatedTopN)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return ids
}()

// annotatedTopN is top_n in Item's annotation.
const annotatedTopN = 10

// holdWithin bounds how long a fleet may take to hold its copies.
const holdWithin = 60 * time.Second

// parallel is how many instances start, hold or close at once: enough to
// overlap their round trips, few enough that 256 of them do not queue
// thousands of dials on the server at the same moment.
const parallel = 16

// localFleet is a fleet in this process.
type localFleet struct{ insts []Instance }

// newLocalFleet starts n instances of sys. On an error it closes those
// that started.
func newLocalFleet(ctx context.Context, sys systemInfo, t Target, n int) (*localFleet, error) {
	f := &localFleet{insts: make([]Instance, n)}
	err := each(n, func(i int) error {
		inst, err := sys.New(ctx, t)
		f.insts[i] = inst
		return err
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: start %d instances: %w", sys.Name, n, err)
	}
	return f, nil
}

func (f *localFleet) Hold(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, holdWithin)
	defer cancel()
	return each(len(f.insts), func(i int) error { return f.insts[i].Hold(ctx, heldIDs) })
}

func (f *localFleet) Held(ctx context.Context) (int, error) {
	var total atomic.Int64
	err := each(len(f.insts), func(i int) error {
		n, err := f.insts[i].Held(ctx, heldIDs)
		total.Add(int64(n))
		return err
	})
	return int(total.Load()), err
}

func (f *localFleet) Close() error {
	return each(len(f.insts), func(i int) error {
		if f.insts[i] == nil {
			return nil
		}
		return f.insts[i].Close()
	})
}

// each calls fn(i) for i in [0, n), parallel at a time, and returns the
// first few errors joined.
func each(n int, fn func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, parallel)
	)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				mu.Lock()
				if len(errs) < 3 {
					errs = append(errs, fmt.Errorf("instance %d: %w", i, err))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
