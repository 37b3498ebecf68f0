package soak

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
)

// hungFor is how long Redis must leave the probe's PING unanswered for
// the checker to count a hang nobody injected (history.Window.Hung): the
// runtime's breaker.AnswerWithin, the silence after which the runtime
// opens its breaker and serves hot keys from memory as it does when a
// server hangs. A shorter silence opens no breaker, so its reads are
// held to the bound.
const hungFor = 100 * time.Millisecond

// probeEvery is how often the probe writes a PING, and looks at its
// socket while one is unanswered.
const probeEvery = 5 * time.Millisecond

// probe watches addr for hangs nobody injected until ctx ends, and
// records each as an outage (history.Window.Hung). A loaded machine can
// hold Redis off the CPU for hundreds of milliseconds; the runtime then
// serves hot keys from memory as it does for any hung server, by design,
// and a write Redis acknowledged just before the hang is not seen until
// Redis answers again, as for a hang injected.
//
// A hang is proved, not guessed from a timeout, and proved whether or
// not the probe's own goroutine runs meanwhile: the same loaded machine,
// and the checker's busy readers, hold it up as much as Redis. It counts
// from when the PING was written (the write returned, so the PING was
// Redis's to read; a probe held up before it reads the clock shortens
// the hang) until the kernel received the answer, the time the kernel
// stamps on it (SO_TIMESTAMPNS), however late the probe reads it. A
// probe that looked at its socket now and then instead missed a hang
// of 290 ms at fa68ea0, held up through it (TestAProbeHeldUpThroughAHangProvesIt).
// Connections refused or cut (a restart) are the faults' outages, not
// hangs: the probe dials again. Where the kernel stamps nothing, no hang
// is proved, and none is forgiven.
func (r *run) probe(ctx context.Context, addr string) {
	for ctx.Err() == nil {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			sleep(ctx, probeEvery)
			continue
		}
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		err = r.probeOn(ctx, conn.(*net.TCPConn))
		stop()
		conn.Close()
		if err != nil {
			sleep(ctx, probeEvery)
		}
	}
}

// probeOn pings on conn until it fails, recording each hang it proves.
func (r *run) probeOn(ctx context.Context, conn *net.TCPConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	if err := stampArrivals(raw); err != nil {
		return err
	}
	for ctx.Err() == nil {
		sent, silent, err := ping(conn, raw, r.now, nil)
		if err != nil {
			return err
		}
		if silent-sent >= hungFor {
			r.mu.Lock()
			r.hangs = append(r.hangs, history.Window{From: sent, To: silent, Hung: true})
			r.mu.Unlock()
		}
		sleep(ctx, probeEvery)
	}
	return ctx.Err()
}

// ping writes a PING on conn (raw, its socket, which stampArrivals set
// up) and reads its answer, and returns when the PING was Redis's to read
// (sent) and when the kernel received the answer (silent, the end of the
// silence; sent when the kernel stamped nothing), by now. heldUp, when
// not nil, runs before each read, as a scheduler that holds the probe up
// would.
func ping(conn net.Conn, raw syscall.RawConn, now func() time.Duration, heldUp func()) (sent, silent time.Duration, err error) {
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return 0, 0, err
	}
	sent, wrote := now(), time.Now()
	var answer []byte
	var arrived time.Time
	buf := make([]byte, 64)
	// To the line's end, the last part's stamp the answer's; a line
	// longer than buf is no PONG.
	for !bytes.HasSuffix(answer, []byte("\n")) && len(answer) <= len(buf) {
		if heldUp != nil {
			heldUp()
		}
		n, at, err := receive(raw, buf)
		if err != nil {
			return 0, 0, err
		}
		answer, arrived = append(answer, buf[:n]...), at
	}
	if string(answer) != "+PONG\r\n" {
		return 0, 0, errors.New("soak: the probe's PING was answered " + string(answer))
	}
	silent = sent
	if !arrived.IsZero() {
		// Both are wall-clock times (the kernel's stamp has no monotonic
		// reading): a step of the wall clock between them is the one
		// error, and a test run has none.
		silent = sent + max(arrived.Sub(wrote), 0)
	}
	return sent, silent, nil
}

// received is what a read of the socket that returned n and err gave:
// io.EOF for nothing, the peer gone.
func received(n int, err error) (int, error) {
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
