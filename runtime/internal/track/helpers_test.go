package track

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// epoch is where the tests' manual clocks start.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// unreadSocket returns a Socket whose connection holds bytes nobody
// read, closed when t ends.
func unreadSocket(t *testing.T) *breaker.Socket {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("+PONG\r\n"))
			t.Cleanup(func() { c.Close() })
		}
	}()
	sock := new(breaker.Socket)
	var d net.Dialer
	cn, err := sock.Dialer(d.DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close() })
	redistest.WaitFor(t, "the bytes to arrive", func() bool { return !sock.Drained() })
	return sock
}
