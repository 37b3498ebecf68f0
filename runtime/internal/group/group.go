// Package group runs goroutines that a close waits for: the Cache's and
// a hub's background work, which must not outlive them (Group); and the
// user's code, which a close does not wait for (Unattended).
package group

import "sync"

// Group is a set of goroutines that Close waits for. A goroutine started
// after Close began would race its Wait, and might outlive it: Go refuses
// it instead.
type Group struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Go runs f on a goroutine of g's, unless g is closing, and reports
// whether f runs.
func (g *Group) Go(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// Close refuses new goroutines and waits for those running.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}
