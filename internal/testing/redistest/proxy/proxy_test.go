package proxy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// ping sends PING on conn and reports whether +PONG came back within d.
func ping(t *testing.T, conn net.Conn, r *bufio.Reader, d time.Duration) bool {
	t.Helper()
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	return pong(t, conn, r, d)
}

// pong reports whether +PONG arrives on conn within d.
func pong(t *testing.T, conn net.Conn, r *bufio.Reader, d time.Duration) bool {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	line, err := r.ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	if err != nil || line != "+PONG\r\n" {
		t.Fatalf("read %q, %v; want +PONG", line, err)
	}
	return true
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// start starts a proxy to upstream for t.
func start(t *testing.T, upstream string) *Proxy {
	t.Helper()
	p, err := New(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestCutHoldsBytesUntilHealed(t *testing.T) {
	p := start(t, redistest.Start(t).Addr)
	conn, r := dial(t, p.Addr)
	if !ping(t, conn, r, time.Second) {
		t.Fatal("no answer through the proxy")
	}
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	if ping(t, conn, r, 200*time.Millisecond) {
		t.Fatal("answered through a cut proxy")
	}
	late, lr := dial(t, p.Addr) // accepted while cut
	if ping(t, late, lr, 100*time.Millisecond) {
		t.Fatal("a connection made while cut was answered")
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if !pong(t, conn, r, time.Second) || !pong(t, late, lr, time.Second) {
		t.Fatal("what was sent while cut was not delivered after Heal")
	}
}

func TestSlowDelaysReplies(t *testing.T) {
	p := start(t, redistest.Start(t).Addr)
	conn, r := dial(t, p.Addr)
	if err := p.Slow(150 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if !ping(t, conn, r, time.Second) || time.Since(start) < 140*time.Millisecond {
		t.Fatalf("answered in %v through a proxy slowed by 150ms", time.Since(start))
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if !ping(t, conn, r, time.Second) || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("answered in %v after Heal", time.Since(start))
	}
}

func TestMoveClosesConnectionsAndReachesTheNewServer(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ctx := context.Background()
	if err := b.Client(t).Set(ctx, "who", "b", 0).Err(); err != nil {
		t.Fatal(err)
	}
	p := start(t, a.Addr)
	conn, r := dial(t, p.Addr)
	if err := p.Move(b.Addr); err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("PING\r\n"))
	conn.SetReadDeadline(time.Now().Add(time.Second))
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("a connection to the old server answered %q after Move", line)
	}
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer rdb.Close()
	if got, err := rdb.Get(ctx, "who").Result(); got != "b" {
		t.Fatalf("through the moved proxy: %q, %v; want b", got, err)
	}
}

// Proxies that follow one Delay delay their replies alike, by what it is
// set to once it got there, and no longer once it is set back to none.
func TestProxiesThatFollowADelayDelayTheirRepliesAlike(t *testing.T) {
	srv := redistest.Start(t)
	d, err := NewDelay()
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var readers []*bufio.Reader
	for range 2 {
		p := start(t, srv.Addr)
		if err := p.Follow(d); err != nil {
			t.Fatal(err)
		}
		c, r := dial(t, p.Addr)
		conns, readers = append(conns, c), append(readers, r)
	}
	for _, late := range []time.Duration{150 * time.Millisecond, 0} {
		if err := d.Set(late); err != nil {
			t.Fatal(err)
		}
		// The delay moves at the pace of the clock (Set): within a
		// dozen PINGs every reply takes it.
		for i := range conns {
			took := time.Duration(0)
			for try := 0; try < 12 && took < late; try++ {
				start := time.Now()
				if !ping(t, conns[i], readers[i], time.Second) {
					t.Fatalf("proxy %d did not answer, following a delay of %v", i, late)
				}
				took = time.Since(start)
			}
			if took < late {
				t.Fatalf("proxy %d answered in %v, following a delay of %v", i, took, late)
			}
		}
	}
}

// The proxies are no part of the test's process: none of its sockets
// listens at a proxy's address, so a test that starves its goroutines
// does not stop the network its clients see.
func TestProxiesListenInAnotherProcess(t *testing.T) {
	p := start(t, redistest.Start(t).Addr)
	_, port, _ := net.SplitHostPort(p.Addr)
	inode := listener(t, port)
	if inode == "" {
		t.Fatalf("no socket listens at %s", p.Addr)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if link, _ := os.Readlink("/proc/self/fd/" + fd.Name()); link == "socket:["+inode+"]" {
			t.Fatalf("this process listens at %s: the proxy runs inside the test", p.Addr)
		}
	}
}

// listener returns the inode of the IPv4 socket listening on port, from
// /proc/net/tcp.
func listener(t *testing.T, port string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	want := fmt.Sprintf(":%04X", n)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], want) && f[3] == "0A" { // 0A: LISTEN
			return f[9]
		}
	}
	return ""
}
