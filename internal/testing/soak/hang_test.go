package soak

import (
	"context"
	"net"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"golang.org/x/sys/unix"
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

// A probe the scheduler holds up proves no hang: it dates Redis's answer
// by the kernel's stamp, no later than the moment the test saw the answer
// waiting in the socket, however long after that the probe reads it.
func TestAProbeHeldUpIsNoHang(t *testing.T) {
	srv := redistest.Start(t)
	conn, raw, now := probeConn(t, srv)
	var seen time.Duration
	held := false
	sent, silent, err := ping(conn, raw, now, func() {
		if !held {
			held = true
			waitUnread(t, raw)
			seen = now()
			time.Sleep(2 * hungFor) // held up well past the answer
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if silent > seen {
		t.Fatalf("a probe held up %v after its answer came dated the answer %v after the PING, though it was waiting %v after", 2*hungFor, silent-sent, seen-sent)
	}
}

// A probe held up through a hang proves it all the same: the answer's
// stamp is the kernel's, when Redis answered, not when the probe read it.
// (At fa68ea0 the probe looked at its socket now and then instead, and a
// probe held up through a hang found the answer waiting when it looked,
// and proved nothing.)
func TestAProbeHeldUpThroughAHangProvesIt(t *testing.T) {
	srv := redistest.Start(t)
	conn, raw, now := probeConn(t, srv)
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	held := false
	sent, silent, err := ping(conn, raw, now, func() {
		if !held {
			held = true
			time.Sleep(2 * hungFor) // Redis frozen all along
			if err := srv.Thaw(); err != nil {
				t.Error(err)
			}
			waitUnread(t, raw)
			time.Sleep(2 * hungFor) // and the probe held up past its answer
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if silent-sent < 2*hungFor {
		t.Fatalf("Redis frozen %v after the PING was written answered %v after it, by the probe", 2*hungFor, silent-sent)
	}
}

// probeConn dials srv as the probe does, and returns the connection, its
// socket and a clock.
func probeConn(t *testing.T, srv *redistest.Server) (net.Conn, syscall.RawConn, func() time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := stampArrivals(raw); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	return conn, raw, func() time.Duration { return time.Since(start) }
}

// waitUnread waits until the socket holds a byte unread, peeking at it.
func waitUnread(t *testing.T, rc syscall.RawConn) {
	t.Helper()
	for {
		var n int
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			n, _, err = unix.Recvfrom(int(fd), make([]byte, 1), unix.MSG_PEEK|unix.MSG_DONTWAIT)
		}); cerr != nil {
			t.Fatal(cerr)
		}
		switch {
		case err == nil && n > 0:
			return
		case err != nil && err != unix.EAGAIN:
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
}
