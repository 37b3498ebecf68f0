// Package toxic runs TCP proxies in front of redis-servers in the
// process that imports it, by toxiproxy's Go package: the network between
// a client and Redis, which a test slows, cuts or points at another
// server. Only proxyd imports it: a test's proxies run in a process of
// their own (package proxy), so that a test starving its own goroutines
// never starves the network its clients see.
package toxic

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy is a TCP proxy in front of a redis-server, run in this process by
// toxiproxy's Go package (no toxiproxy server, no HTTP): it stands for
// what lies between an application and Redis in production, a network
// path, a load balancer, an endpoint name, so that a test can slow it,
// cut it or point it at another server for the clients behind it alone.
type Proxy struct {
	Addr string // where clients connect
	p    *toxiproxy.Proxy
	// id names the proxy to its toxics, and stopped is closed when it
	// closes: a toxic holding bytes gives up handing them to a link that
	// a stopped proxy no longer reads, where it would wait forever.
	id      string
	stopped chan struct{}
}

// proxies are the open proxies by id, for their toxics.
var proxies sync.Map

var seq atomic.Int64

// stoppedOf returns the channel closed when the proxy id closes; nil,
// which never is, for a proxy no longer open.
func stoppedOf(id string) <-chan struct{} {
	if p, ok := proxies.Load(id); ok {
		return p.(*Proxy).stopped
	}
	return nil
}

// pass hands c on, unless the proxy stopped (returning false).
func pass(stub *toxics.ToxicStub, c *stream.StreamChunk, stopped <-chan struct{}) bool {
	select {
	case stub.Output <- c:
		return true
	case <-stopped:
		return false
	}
}

// drain drops what reaches the stub of a stopped proxy until its
// connection's end, so that the goroutine reading the connection does not
// wait forever to hand it over, or until the toxic is removed.
func drain(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
		}
	}
}

// toxiServer is the toxiproxy state every Proxy shares: metrics nobody
// reads and a logger that drops everything (it would log every
// connection).
var toxiServer = sync.OnceValue(func() *toxiproxy.ApiServer {
	toxics.Register("hold", new(holdToxic))
	toxics.Register("delay", new(delayToxic))
	return toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
})

// New starts a proxy to upstream on a free loopback port; the caller
// closes it.
func New(upstream string) (*Proxy, error) {
	p := toxiproxy.NewProxy(toxiServer(), "redis "+upstream, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("toxic: to %s: %w", upstream, err)
	}
	px := &Proxy{Addr: p.Listen, p: p, id: strconv.FormatInt(seq.Add(1), 10), stopped: make(chan struct{})}
	proxies.Store(px.id, px)
	return px, nil
}

// Delay is a delay that the replies of every proxy following it take
// together (Follow), as when a server slows down, or the path all its
// clients share: a reply waits the delay in effect when the proxy read it
// from the server, so replies the server wrote together (a write's
// acknowledgement and the invalidation it sent another client) arrive
// together, whatever each connection had queued before them. The order
// of each connection's bytes is kept.
//
// Set does not jump: the delay moves towards its new value no faster
// than time passes, as a queue on a path grows at most by the time it
// stands still and drains at most as fast. So replies read later never
// arrive sooner than replies read earlier, on any connection. A delay
// that jumped from 100 to 300 ms let a reply queued behind another on one
// connection arrive 200 ms after one the server wrote with it on another:
// a slowness of one connection, which is the partition of promise 1's
// exception, not a slow server (the 1,088 reads of RELIABILITY.md's
// latency red).
type Delay struct {
	name string
	mu   sync.Mutex
	// ramps are the moves Set began, oldest first; the first, from the
	// beginning of time, holds the Delay's first value.
	ramps []ramp
}

// ramp is a move of a Delay from one value to another, begun at at, at
// the pace of the clock.
type ramp struct {
	at       time.Time
	from, to time.Duration
}

// value returns the delay the ramp gives at t, at or after its start.
func (r ramp) value(t time.Time) time.Duration {
	switch moved := t.Sub(r.at); {
	case moved >= max(r.to-r.from, r.from-r.to):
		return r.to
	case r.to > r.from:
		return r.from + moved
	default:
		return r.from - moved
	}
}

// delays are the Delays by name, for the toxics that follow them.
var delays sync.Map

// NewDelay returns a Delay of 0.
func NewDelay() *Delay { return newDelay(0) }

func newDelay(v time.Duration) *Delay {
	d := &Delay{name: strconv.FormatInt(seq.Add(1), 10), ramps: []ramp{{from: v, to: v}}}
	delays.Store(d.name, d)
	return d
}

// Set moves the delay towards v from now on, at the pace of the clock
// (see Delay).
func (d *Delay) Set(v time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.ramps = append(d.ramps, ramp{at: now, from: d.atLocked(now), to: v})
}

// At returns the delay of a reply read from the server at t.
func (d *Delay) At(t time.Time) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.atLocked(t)
}

func (d *Delay) atLocked(t time.Time) time.Duration {
	i := len(d.ramps) - 1
	for i > 0 && d.ramps[i].at.After(t) {
		i--
	}
	return d.ramps[i].value(t)
}

// Follow delays p's replies by d until Heal.
func (p *Proxy) Follow(d *Delay) error {
	return p.add("follows "+d.name, "delay", "downstream", map[string]string{"delay": d.name, "proxy": p.id})
}

// delayToxic delays each chunk by its Delay's value when the proxy read
// the chunk (Delay.At), measured from then.
type delayToxic struct {
	Delay string `json:"delay"`
	Proxy string `json:"proxy"`
}

func (t *delayToxic) Pipe(stub *toxics.ToxicStub) {
	v, _ := delays.Load(t.Delay)
	d, _ := v.(*Delay)
	stopped := stoppedOf(t.Proxy)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if wait := d.At(c.Timestamp) - time.Since(c.Timestamp); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-stub.Interrupt:
					t.Stop()
					pass(stub, c, stopped) // nothing dropped
					return
				case <-stopped:
					t.Stop()
					drain(stub)
					return
				}
			}
			if !pass(stub, c, stopped) {
				drain(stub)
				return
			}
		}
	}
}

// Slow delays every reply by latency until Heal, from the first reply
// read: a slow server, or a slow path to it, as its clients see either.
// Requests pass at once.
func (p *Proxy) Slow(latency time.Duration) error { return p.Follow(newDelay(latency)) }

// Cut partitions the clients from the server until Heal: connections stay
// open and new ones are accepted, but no byte passes either way; on Heal
// everything sent meanwhile is delivered, in order, as TCP delivers what
// it retransmits once a partition heals.
func (p *Proxy) Cut() error {
	for _, dir := range []string{"upstream", "downstream"} {
		if err := p.add("cut "+dir, "hold", dir, map[string]string{"proxy": p.id}); err != nil {
			return err
		}
	}
	return nil
}

// Heal undoes Slow and Cut.
func (p *Proxy) Heal() { p.p.Toxics.ResetToxics(context.Background()) }

// Move points the proxy at another server. Every connection through it is
// closed, as when a virtual IP moves to another host: clients reconnect,
// to the new server.
func (p *Proxy) Move(upstream string) error {
	return p.p.Update(&toxiproxy.Proxy{Listen: p.Addr, Upstream: upstream, Enabled: true})
}

// Close stops the proxy and closes every connection through it; its
// toxics give up the bytes they hold.
func (p *Proxy) Close() {
	if _, ok := proxies.LoadAndDelete(p.id); ok {
		close(p.stopped)
	}
	p.p.Stop()
}

func (p *Proxy) add(name, kind, dir string, attrs any) error {
	b, err := json.Marshal(map[string]any{"name": name, "type": kind, "stream": dir, "attributes": attrs})
	if err != nil {
		return err
	}
	_, err = p.p.Toxics.AddToxicJson(strings.NewReader(string(b)))
	return err
}

// holdToxic holds every byte that reaches it until it is removed, then
// passes them on in order. toxiproxy's own "timeout" toxic drops them
// instead, which no TCP connection lives through: a Redis connection would
// go on after the cut with replies and invalidation messages missing, a
// fault no network causes (it retransmits, or the connection breaks).
type holdToxic struct {
	Proxy string `json:"proxy"`
}

func (t *holdToxic) Pipe(stub *toxics.ToxicStub) {
	stopped := stoppedOf(t.Proxy)
	var held []*stream.StreamChunk
	for {
		select {
		case <-stopped:
			drain(stub)
			return
		case <-stub.Interrupt:
			for _, c := range held {
				if !pass(stub, c, stopped) {
					break
				}
			}
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			held = append(held, c)
		}
	}
}
