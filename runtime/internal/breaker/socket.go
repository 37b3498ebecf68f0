package breaker

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"
)

// Socket is the connection a line or a session reads, as its client last
// dialled it, so that a verdict of silence is checked against what the
// kernel holds unread. A read whose deadline passed before its goroutine
// got to the socket (the scheduler held it up) reports a timeout without
// looking: Go checks the deadline first. A verdict trusted on that timeout
// would date a node's silence after its answers came, and keep its copies
// served while it took others' writes; one checked against the socket
// waits for the next read, which takes the answers.
type Socket struct {
	conn atomic.Pointer[syscall.RawConn]
}

// Dialer returns dial, each connection of which s records: the one a
// client made last is the one its line or session reads. A client that
// dials other connections beside it must not share s.
func (s *Socket) Dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := dial(ctx, network, addr)
		if err == nil {
			s.record(cn)
		}
		return cn, err
	}
}

// record keeps cn's file descriptor, found through wrappers that expose
// the connection they wrap (a *tls.Conn's NetConn): none for a
// connection of another kind, whose reads are then trusted as before.
func (s *Socket) record(cn net.Conn) {
	for range 8 {
		switch c := cn.(type) {
		case syscall.Conn:
			if rc, err := c.SyscallConn(); err == nil {
				s.conn.Store(&rc)
				return
			}
		case interface{ NetConn() net.Conn }:
			cn = c.NetConn()
			continue
		}
		break
	}
	s.conn.Store(nil)
}

// Drained reports whether the socket holds no byte unread: what came
// before now was read. It reports true when it cannot tell (no
// connection yet, one of another kind, a system without the call).
func (s *Socket) Drained() bool {
	if s == nil {
		return true
	}
	rc := s.conn.Load()
	if rc == nil {
		return true
	}
	n, ok := unread(*rc)
	return !ok || n == 0
}
