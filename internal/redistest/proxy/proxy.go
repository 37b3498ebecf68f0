// Package proxy runs TCP proxies in front of redis-servers in this
// process, for tests that fail the network between a client and Redis:
// slow it, cut it, or point it at another server. It is apart from
// redistest so that the programs that only start servers do not take
// toxiproxy in.
package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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
}

// toxiServer is the toxiproxy state every Proxy shares: metrics nobody
// reads and a logger that drops everything (it would log every
// connection).
var toxiServer = sync.OnceValue(func() *toxiproxy.ApiServer {
	toxics.Register("hold", new(holdToxic))
	return toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
})

// New starts a proxy to upstream on a free loopback port; the caller
// closes it.
func New(upstream string) (*Proxy, error) {
	p := toxiproxy.NewProxy(toxiServer(), "redis "+upstream, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("proxy: to %s: %w", upstream, err)
	}
	return &Proxy{Addr: p.Listen, p: p}, nil
}

// Slow delays every reply by latency ± jitter (uniformly) until Heal:
// a slow server, or a slow path to it, as its clients see either.
// Requests pass at once.
func (p *Proxy) Slow(latency, jitter time.Duration) error {
	return p.add("slow", "latency", "downstream", map[string]int64{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()})
}

// Cut partitions the clients from the server until Heal: connections stay
// open and new ones are accepted, but no byte passes either way; on Heal
// everything sent meanwhile is delivered, in order, as TCP delivers what
// it retransmits once a partition heals.
func (p *Proxy) Cut() error {
	for _, dir := range []string{"upstream", "downstream"} {
		if err := p.add("cut "+dir, "hold", dir, nil); err != nil {
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

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() { p.p.Stop() }

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
type holdToxic struct{}

func (*holdToxic) Pipe(stub *toxics.ToxicStub) {
	var held []*stream.StreamChunk
	for {
		select {
		case <-stub.Interrupt:
			for _, c := range held {
				stub.Output <- c
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
