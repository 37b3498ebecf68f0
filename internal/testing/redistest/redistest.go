// Package redistest starts private redis-server processes for tests.
//
// Each server listens on a free loopback port, keeps nothing on disk, and is
// stopped when the test ends. A machine without redis-server fails the test
// with instructions; tests that need Redis never skip.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Install tells the reader how to get a server.
const Install = "redis-server is not installed: run `apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis`, or `make test`, whose CI script installs it"

// Server is a running redis-server.
type Server struct {
	Addr   string
	conf   string   // config file redis-server reads first, when set
	args   []string // extra redis-server arguments
	cmd    *exec.Cmd
	exited chan error
	out    *bytes.Buffer
	dir    string
	port   int
}

// Start starts a server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch starts a server outside a test, for TestMain or a benchmark
// harness; the caller stops it. args are passed on to redis-server.
func Launch(args ...string) (*Server, error) { return launch(nil, args...) }

// launch is Launch for a server that needs a config file, as a sentinel
// does: conf writes one for the chosen port into the server's directory and
// returns its path.
func launch(conf func(dir string, port int) (string, error), args ...string) (*Server, error) {
	bin, err := binary("redis-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range 5 { // a free port can be taken between probe and bind
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, port: port, args: args}
		if conf != nil {
			if s.conf, err = conf(dir, port); err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
		}
		if lastErr = s.start(bin); lastErr == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (s *Server) start(bin string) error {
	s.out = new(bytes.Buffer)
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "no",
	}
	if s.conf != "" { // redis-server takes a config file only as its first argument
		args = append([]string{s.conf}, args...)
	}
	s.cmd = exec.Command(bin, append(args, s.args...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	s.exited = make(chan error, 1)
	go func() { s.exited <- s.cmd.Wait() }()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-s.exited:
			s.cmd = nil
			return fmt.Errorf("redistest: redis-server on %s exited (%v): %s", s.Addr, err, s.out.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.stopProcess()
			return fmt.Errorf("redistest: redis-server on %s not ready after 10s: %v: %s", s.Addr, err, s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Client returns a client of s that is closed when t ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// Kill stops the server abruptly, as a crash or a network cut would look to
// its clients; Restart brings it back on the same address.
func (s *Server) Kill() { s.stopProcess() }

// Terminate sends the server SIGTERM, on which redis-server shuts down
// as on SHUTDOWN (saving nothing: a test's server persists nothing), and
// waits up to 10s for it to exit; Relaunch may start it again then.
func (s *Server) Terminate() error {
	if err := s.signal(syscall.SIGTERM); err != nil {
		return err
	}
	return s.WaitExit(10 * time.Second)
}

// WaitExit waits up to d for the server to exit by itself, as it does on
// SHUTDOWN; Relaunch may start it again then.
func (s *Server) WaitExit(d time.Duration) error {
	if s.cmd == nil {
		return nil
	}
	select {
	case <-s.exited:
		s.cmd = nil
		return nil
	case <-time.After(d):
		return fmt.Errorf("redistest: redis-server on %s still running %v after it was asked to stop", s.Addr, d)
	}
}

// signal sends sig to the server's process.
func (s *Server) signal(sig os.Signal) error {
	if s.cmd == nil {
		return fmt.Errorf("redistest: redis-server on %s is not running", s.Addr)
	}
	return s.cmd.Process.Signal(sig)
}

// Restart starts a killed server again on the same address, empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.Relaunch(); err != nil {
		t.Fatal(err)
	}
}

// RestartWith is Restart with args added to the server's own for this
// start only: a server that comes back configured otherwise, as after an
// operator's change.
func (s *Server) RestartWith(t testing.TB, args ...string) {
	t.Helper()
	own := s.args
	s.args = append(append([]string(nil), own...), args...)
	defer func() { s.args = own }()
	s.Restart(t)
}

// Relaunch is Restart outside a test.
func (s *Server) Relaunch() error {
	bin, err := binary("redis-server")
	if err != nil {
		return err
	}
	return s.start(bin)
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	s.stopProcess()
	os.RemoveAll(s.dir)
}

func (s *Server) stopProcess() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		<-s.exited
		s.cmd = nil
	}
}

// FreePort returns a loopback port nothing listens on now, for a server a
// test starts (pgtest's PostgreSQL too); a server that loses it to
// another process meanwhile is started again on another.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redistest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitBlocked waits until the server rdb talks to has n clients blocked
// in a blocking command (INFO clients' blocked_clients): a test's
// goroutine has reached its XREAD BLOCK, a fact the server knows and the
// goroutine cannot say. It fails t after 10 s, far beyond any normal run.
func WaitBlocked(t testing.TB, rdb redis.Cmdable, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := rdb.Info(context.Background(), "clients").Result()
		if err == nil && strings.Contains(info, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: waited 10s for %d blocked clients: %v\n%s", n, err, info)
		}
		time.Sleep(time.Millisecond)
	}
}
