package soak

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
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
// A hang is proved, not guessed from a timeout, since the probe's own
// goroutine may be held up as much as Redis: it counts from when the
// PING was written (the write returned, so the PING was Redis's to read)
// until the last moment the kernel held no answer for it (a peek at the
// socket, made after the clock is read, so a probe held up between the
// two shortens the hang rather than stretching it), and only once the
// answer came on the same connection. Connections refused or cut (a
// restart) are the faults' outages, not hangs: the probe dials again.
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
	rd := bufio.NewReader(conn)
	for ctx.Err() == nil {
		sent, silent, err := ping(conn, rd, raw, r.now, nil)
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

// ping writes a PING on conn and reads its answer from rd, and returns
// when the PING was Redis's to read (sent) and the last moment the kernel
// held no answer for it (silent), by now. heldUp, when not nil, runs
// before each read, as a scheduler that holds the probe up would.
func ping(conn net.Conn, rd *bufio.Reader, raw syscall.RawConn, now func() time.Duration, heldUp func()) (sent, silent time.Duration, err error) {
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return 0, 0, err
	}
	sent = now()
	silent = sent
	var answer string
	for {
		conn.SetReadDeadline(time.Now().Add(probeEvery))
		if heldUp != nil {
			heldUp()
		}
		part, err := rd.ReadString('\n')
		answer += part
		if err == nil {
			if answer != "+PONG\r\n" {
				return 0, 0, errors.New("soak: the probe's PING was answered " + answer)
			}
			return sent, silent, nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, 0, err
		}
		// The read timed out, perhaps without looking: Go checks the
		// deadline first. The kernel says whether the answer came.
		at := now()
		if waiting, ok := unread(raw); ok && !waiting {
			silent = at
		}
	}
}
