// Package proxy puts TCP proxies in front of redis-servers, for tests
// that fail the network between a client and Redis: slow it, cut it, or
// point it at another server. The proxies run in a process of their own
// (proxyd, built and started at the first New), as a network runs apart
// from the programs that use it: proxies in the test's own process, on
// a loaded machine, stopped forwarding whenever the test starved its own
// goroutines, which partitioned a client the test thought connected
// (RELIABILITY.md, "Overloaded cores"). It is apart from redistest so
// that the programs that only start servers do not build proxyd.
package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy is a TCP proxy in front of a redis-server: it stands for what
// lies between an application and Redis in production, a network path, a
// load balancer, an endpoint name, so that a test can slow it, cut it or
// point it at another server for the clients behind it alone.
type Proxy struct {
	Addr string // where clients connect
	id   string
}

// New starts a proxy to upstream on a free loopback port; the caller
// closes it.
func New(upstream string) (*Proxy, error) {
	res, err := call("new", upstream)
	if err != nil {
		return nil, fmt.Errorf("proxy: to %s: %w", upstream, err)
	}
	id, addr, ok := strings.Cut(res, " ")
	if !ok {
		return nil, fmt.Errorf("proxy: to %s: proxyd answered %q", upstream, res)
	}
	return &Proxy{Addr: addr, id: id}, nil
}

// Follow delays p's replies by d until Heal.
func (p *Proxy) Follow(d *Delay) error { return p.do("follow", d.name) }

// Slow delays every reply by latency until Heal: a slow server, or a slow
// path to it, as its clients see either. Requests pass at once.
func (p *Proxy) Slow(latency time.Duration) error {
	return p.do("slow", strconv.FormatInt(int64(latency), 10))
}

// Cut partitions the clients from the server until Heal: connections stay
// open and new ones are accepted, but no byte passes either way; on Heal
// everything sent meanwhile is delivered, in order, as TCP delivers what
// it retransmits once a partition heals.
func (p *Proxy) Cut() error { return p.do("cut") }

// Heal undoes Slow, Follow and Cut.
func (p *Proxy) Heal() error { return p.do("heal") }

// Move points the proxy at another server. Every connection through it is
// closed, as when a virtual IP moves to another host: clients reconnect,
// to the new server.
func (p *Proxy) Move(upstream string) error { return p.do("move", upstream) }

// Close stops the proxy and closes every connection through it; what its
// toxics hold is dropped.
func (p *Proxy) Close() { p.do("close") }

func (p *Proxy) do(verb string, args ...string) error {
	_, err := call(verb, append([]string{p.id}, args...)...)
	return err
}

// Delay is a delay that the replies of every proxy following it take
// together (Follow), as when a server slows down, or the path all its
// clients share: a reply waits the delay in effect when the proxy read it
// from the server, and a Set moves the delay no faster than time passes,
// so replies the server wrote together arrive together on every
// connection (see toxic.Delay).
type Delay struct{ name string }

// NewDelay returns a Delay of 0.
func NewDelay() (*Delay, error) {
	name, err := call("delay")
	if err != nil {
		return nil, err
	}
	return &Delay{name: name}, nil
}

// Set moves the delay towards v from now on, at the pace of the clock:
// it reaches v as long after as v is from the delay now.
func (d *Delay) Set(v time.Duration) error {
	_, err := call("set", d.name, strconv.FormatInt(int64(v), 10))
	return err
}

// daemon is this process's proxyd: requests go one at a time.
type daemon struct {
	mu  sync.Mutex
	in  io.Writer
	out *bufio.Reader
}

// started starts proxyd at the first use, built from this module's
// source; it lives as long as this process (its stdin ends with it).
var started = sync.OnceValues(func() (*daemon, error) {
	bin, err := build()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(filepath.Dir(bin)) // the running program keeps its file
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("proxy: start proxyd: %w", err)
	}
	// Not waited for: it ends with this process, and a goroutine
	// waiting would outlive every test that checks for leaks.
	return &daemon{in: in, out: bufio.NewReader(out)}, nil
})

// build compiles proxyd, without the race detector whatever the test's
// build, into a directory of its own, and returns its path. It builds in
// this file's directory, or, when the build trimmed paths, in the
// working directory, which must be inside this module (a test's is).
func build() (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(goruntime.GOROOT(), "bin", "go")
	}
	dir, err := os.MkdirTemp("", "proxyd-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "proxyd")
	cmd := exec.Command(gobin, "build", "-o", bin, "github.com/hotkeygen/hotkeygen/internal/testing/redistest/proxy/proxyd")
	if _, file, _, ok := goruntime.Caller(0); ok && filepath.IsAbs(file) {
		cmd.Dir = filepath.Dir(file)
	}
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("proxy: build proxyd (needs the go command, run inside the hotkeygen module): %w\n%s", err, out)
	}
	return bin, nil
}

// call sends one request to proxyd and returns its results.
func call(verb string, args ...string) (string, error) {
	d, err := started()
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := fmt.Fprintln(d.in, strings.Join(append([]string{verb}, args...), " ")); err != nil {
		return "", fmt.Errorf("proxy: proxyd: %w", err)
	}
	line, err := d.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("proxy: proxyd: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "err "); ok {
		return "", errors.New(msg)
	}
	res, ok := strings.CutPrefix(line, "ok")
	if !ok {
		return "", fmt.Errorf("proxy: proxyd answered %q", line)
	}
	return strings.TrimPrefix(res, " "), nil
}
