package background

import (
	"testing"
	"time"
)

// Every calls f at each tick, on its own goroutine, until done is
// closed, and stops its ticker then.
func TestEveryCallsFAtEachTickUntilDone(t *testing.T) {
	tk := &ticker{c: make(chan time.Time)}
	done := make(chan struct{})
	calls := make(chan int, 3)
	n := 0
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		Every(tk, time.Second, done, func() { n++; calls <- n })
	}()
	for i := 1; i <= 3; i++ {
		tk.c <- epoch
		if got := <-calls; got != i {
			t.Fatalf("call %d, want %d", got, i)
		}
	}
	close(done)
	<-ended
	if !tk.stopped || tk.period != time.Second {
		t.Fatalf("ticker of period %v stopped %v; want a period of 1s, stopped", tk.period, tk.stopped)
	}
}
