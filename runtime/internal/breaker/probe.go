package breaker

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// ProbeOptions are the options of a node's probe client, made from o, a
// copy of those of a client of the node (go-redis writes to a live
// client's options): one connection, one dial attempt and short timeouts,
// where the caller's client would retry for seconds. The watcher's line
// is a connection of it, which reads its answers in windows of its own:
// the client's ReadTimeout bounds only the greeting of a new connection
// (HELLO), and is SlowFor, so that a line to a node that answers late can
// still be made, and heard. It does not name itself (CLIENT SETINFO):
// after a restart, the answer that closes the breaker comes one round
// trip sooner.
//
// Nor does its pool ever see a dial fail. A go-redis pool whose dials
// failed PoolSize times stops dialling: it answers with the last dial
// error while a goroutine of its own redials once a second, so a probe
// that met a dead Redis once would not see it restarted for up to a
// second. The probe's dials hand the pool a connection that fails its
// first use with the dial's error instead, discarded like any broken one.
func ProbeOptions(o *redis.Options) *redis.Options {
	p := *o
	p.PoolSize, p.MinIdleConns, p.MaxIdleConns, p.MaxActiveConns = 1, 0, 1, 0
	p.MaxRetries, p.DialerRetries = -1, 1
	p.DialTimeout, p.ReadTimeout, p.WriteTimeout = AnswerWithin, SlowFor, AnswerWithin
	p.DisableIdentity = true
	p.OnConnect = nil
	dial := p.Dialer
	if dial == nil {
		dial = redis.NewDialer(&p)
	}
	p.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := dial(ctx, network, addr)
		if err != nil {
			return failedDial{err}, nil
		}
		return cn, nil
	}
	return &p
}

// failedDial is a connection that could not be made: every use returns
// the dial's error.
type failedDial struct{ err error }

func (f failedDial) Read([]byte) (int, error)         { return 0, f.err }
func (f failedDial) Write([]byte) (int, error)        { return 0, f.err }
func (f failedDial) Close() error                     { return nil }
func (f failedDial) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (f failedDial) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (f failedDial) SetDeadline(time.Time) error      { return nil }
func (f failedDial) SetReadDeadline(time.Time) error  { return nil }
func (f failedDial) SetWriteDeadline(time.Time) error { return nil }
