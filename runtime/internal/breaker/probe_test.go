package breaker

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// The probe that decides whether a node is up dials as the client does:
// through the client's own Dialer when it has one (a proxy, a tunnel, a
// custom TLS), else go-redis's. A probe that dialled otherwise would judge
// a path the client never takes.
func TestTheProbeDialsAsTheClientDoes(t *testing.T) {
	srv := redistest.Start(t)
	ping := func(t *testing.T, o *redis.Options) {
		t.Helper()
		probe := redis.NewClient(ProbeOptions(o))
		defer probe.Close()
		if err := probe.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("probe's ping: %v", err)
		}
	}
	t.Run("through the client's Dialer", func(t *testing.T) {
		// The address resolves nowhere; only the Dialer reaches the server.
		const addr = "through-the-dialer.invalid:6379"
		var dials atomic.Int32
		var asked atomic.Value
		ping(t, &redis.Options{Addr: addr, Dialer: func(ctx context.Context, network, a string) (net.Conn, error) {
			dials.Add(1)
			asked.Store(a)
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Addr)
		}})
		if dials.Load() == 0 || asked.Load() != addr {
			t.Errorf("the Dialer dialled %d times, for %v; want the probe's dials, for %s", dials.Load(), asked.Load(), addr)
		}
	})
	t.Run("with go-redis's dialer when the client has none", func(t *testing.T) {
		ping(t, &redis.Options{Addr: srv.Addr})
	})
}
