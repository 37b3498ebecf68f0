package track

import (
	"context"
	"testing"

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
