package track

import (
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/auth"
)

// streaming is a StreamingCredentialsProvider whose credentials are
// user's, and which counts the subscriptions left open.
type streaming struct {
	user string
	open *int
}

func (s streaming) Subscribe(auth.CredentialsListener) (auth.Credentials, auth.UnsubscribeFunc, error) {
	*s.open++
	return auth.NewBasicCredentials(s.user, "pw"), func() error { *s.open--; return nil }, nil
}

// A keyed session's own connection authenticates as its client's would:
// with the same credentials, taken in go-redis's order, and a streaming
// provider's once, as it connects, without staying subscribed.
func TestAKeyedSessionAuthenticatesAsItsClientWould(t *testing.T) {
	open := 0
	for _, tc := range []struct {
		name string
		o    redis.Options
		user string
	}{
		{"a username and password", redis.Options{Username: "plain", Password: "pw"}, "plain"},
		{"a provider", redis.Options{Username: "plain", CredentialsProvider: func() (string, string) { return "provided", "pw" }}, "provided"},
		{"a provider with a context, before a provider", redis.Options{
			CredentialsProvider:        func() (string, string) { return "provided", "pw" },
			CredentialsProviderContext: func(context.Context) (string, string, error) { return "contextual", "pw", nil },
		}, "contextual"},
		{"a streaming provider, before the others", redis.Options{
			CredentialsProviderContext:   func(context.Context) (string, string, error) { return "contextual", "pw", nil },
			StreamingCredentialsProvider: streaming{"streamed", &open},
		}, "streamed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, pass, err := credentials(t.Context(), &tc.o)
			if err != nil || user != tc.user || pass != "pw" {
				t.Fatalf("credentials: %q, %q, %v; want %q, pw", user, pass, err, tc.user)
			}
		})
	}
	if open != 0 {
		t.Fatalf("%d subscriptions to the streaming provider left open", open)
	}
}

// An invalidation that comes during the handshake, between two of its
// answers, is not taken for an answer: the keys it names, which the
// server forgot as it sent it, are not counted tracked when the session
// starts (all of them for a flush's), and each answer still goes to its
// command. A server scripted on a pipe sends the push between the
// subscription's answer and EXISTS's.
func TestAnInvalidationDuringTheHandshakeUntracksItsKeys(t *testing.T) {
	for _, tc := range []struct {
		name, push string
		tracked    []string
	}{
		{"of a key", ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\na:1\r\n", []string{"a:2"}},
		{"of a flush", ">2\r\n$10\r\ninvalidate\r\n_\r\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			t.Cleanup(func() { server.Close() })
			go io.Copy(io.Discard, server) // the commands
			go server.Write([]byte("%1\r\n+proto\r\n:3\r\n" + "+OK\r\n" + ">3\r\n+subscribe\r\n+__redis__:invalidate\r\n:1\r\n" + tc.push + ":2\r\n"))
			o := &redis.Options{Addr: "scripted", Dialer: func(context.Context, string, string) (net.Conn, error) { return client, nil }}
			ss, err := keyed{o: o, keys: func() []string { return []string{"a:1", "a:2"} }}.listener()(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			s := ss.(*keyedSession)
			defer s.close()
			if !slices.Equal(s.initial, tc.tracked) {
				t.Fatalf("tracked as the session starts: %q, want %q", s.initial, tc.tracked)
			}
		})
	}
}

// A cluster replica's session tracks again, at once, the keys it is told
// of: Redis forgets a key as it sends its invalidation, and a replica
// sends its own when it applies the replicated write, after the master's,
// whose handling may already have asked for the key (Node.Track) before
// the replica forgot it. A master's session leaves that to the copies,
// whose next keep asks it (Node.Track). A server scripted on a pipe
// pushes the invalidation.
func TestAReplicasSessionTracksAgainWhatItIsToldOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replica bool
	}{
		{"a replica", true},
		{"a master", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			t.Cleanup(func() { server.Close() })
			got := make(chan []string, 16) // the commands the session sends
			go func() {
				w := newWire(server)
				for {
					r, err := w.next(time.Hour, time.Hour)
					if err != nil {
						return
					}
					var cmd []string
					for _, e := range r.elems {
						cmd = append(cmd, e.str)
					}
					got <- cmd
				}
			}()
			go server.Write([]byte("%1\r\n+proto\r\n:3\r\n" + "+OK\r\n" + "+OK\r\n" + ">3\r\n+subscribe\r\n+__redis__:invalidate\r\n:1\r\n" +
				">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\na:1\r\n"))
			o := &redis.Options{Addr: "scripted", Dialer: func(context.Context, string, string) (net.Conn, error) { return client, nil }}
			ss, err := keyed{o: o, keys: func() []string { return nil }, cluster: true}.listener()(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			s := ss.(*keyedSession)
			defer s.close()
			n := &Node{Name: "node"}
			if tc.replica {
				n.master.Store(&Node{Name: "its master"})
			}
			s.arm(func() {}, voucher{now: time.Now, n: n, heard: func(error, time.Time) {}})
			keys, _, err := s.next(t.Context())
			for err == nil && len(keys) == 0 { // a PING's turn
				keys, _, err = s.next(t.Context())
			}
			if err != nil || !slices.Equal(keys, []string{"a:1"}) {
				t.Fatalf("next: %q, %v; want the invalidation of a:1", keys, err)
			}
			s.mu.Lock()
			_, asked := s.pending["a:1"]
			s.mu.Unlock()
			if asked != tc.replica {
				t.Fatalf("a:1 asked again: %v, want %v", asked, tc.replica)
			}
			if !tc.replica {
				return
			}
			for cmd := range got {
				if slices.Equal(cmd, []string{"EXISTS", "a:1"}) {
					return
				}
			}
		})
	}
}
