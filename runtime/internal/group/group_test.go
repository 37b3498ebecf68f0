package group

import (
	"sync/atomic"
	"testing"
)

// Close waits for every goroutine Go started, and Go starts none after
// Close began.
func TestCloseWaitsForEveryGoroutineAndRefusesNewOnes(t *testing.T) {
	var g Group
	var ran atomic.Int32
	release := make(chan struct{})
	for range 10 {
		if !g.Go(func() { <-release; ran.Add(1) }) {
			t.Fatal("an open group refused a goroutine")
		}
	}
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	close(release)
	<-closed
	if n := ran.Load(); n != 10 {
		t.Fatalf("Close returned with %d of 10 goroutines done", n)
	}
	if g.Go(func() { ran.Add(1) }) {
		t.Fatal("a closed group started a goroutine")
	}
}
