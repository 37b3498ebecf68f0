package soak

import (
	"bufio"
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// A server held off the CPU (SIGSTOP) while nobody injects a fault is a
// hang the probe proves: one window of hungFor or more within the freeze,
// freeing the reads in it from the bound as an outage does.
func TestTheProbeFindsAServerHeldOffTheCPU(t *testing.T) {
	srv := redistest.Start(t)
	r := &run{start: time.Now(), srv: srv}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { r.probe(ctx, srv.Addr) })
	defer func() { cancel(); wg.Wait() }()

	// Once the probe has its answers, freeze the server for a second:
	// long enough for the probe to look at its socket twice, hungFor
	// apart, on any machine.
	rdb := srv.Client(t)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	frozen := r.now()
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	sleep(ctx, time.Second)
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	thawed := r.now()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// The probe records the hang once it reads the answer; wait for it.
	found := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return slices.ContainsFunc(r.hangs, func(w history.Window) bool {
			return w.Hung && w.To-w.From >= hungFor && w.From < thawed && w.To > frozen
		})
	}
	wait := t.Context()
	if d, ok := t.Deadline(); ok {
		var stop context.CancelFunc
		wait, stop = context.WithDeadline(wait, d.Add(-5*time.Second))
		defer stop()
	}
	for !found() {
		if !sleep(wait, probeEvery) {
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("the server was frozen from %v to %v; the probe found the hangs %v", frozen, thawed, r.hangs)
		}
	}
}

// A probe the scheduler holds up proves no hang: its read's deadline
// passes before it looks, and the kernel holds Redis's answer.
func TestAProbeHeldUpIsNoHang(t *testing.T) {
	srv := redistest.Start(t)
	conn, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	held := false
	sent, silent, err := ping(conn, bufio.NewReader(conn), raw, now, func() {
		if !held {
			held = true
			time.Sleep(2 * hungFor) // the answer comes meanwhile
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if silent-sent >= hungFor {
		t.Fatalf("a probe held up %v proved a hang of %v", 2*hungFor, silent-sent)
	}
}
