package runtime

import (
	"net/url"
	"testing"
)

func TestAppendKeyString(t *testing.T) {
	tests := []struct {
		name, in, special, want string
	}{
		{"a string without special bytes is unchanged", "alice", ":%", "alice"},
		{"the delimiter is escaped", "a:b", ":%", "a%3Ab"},
		{"the escape byte itself is escaped", "100%", ":%", "100%25"},
		{"an escaped-looking value cannot pass for another", "a%3Ab", ":%", "a%253Ab"},
		{"other template punctuation is escaped when named", "x/y", "/%", "x%2Fy"},
		{"bytes not named stay", "x/y", ":%", "x/y"},
		{"empty stays empty", "", ":%", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendKeyString([]byte("k:"), tt.in, tt.special))
			if got != "k:"+tt.want {
				t.Fatalf("got %q, want %q", got, "k:"+tt.want)
			}
			if back, err := url.PathUnescape(tt.want); err != nil || back != tt.in {
				t.Fatalf("%q does not decode back to %q: %q, %v", tt.want, tt.in, back, err)
			}
		})
	}
}

// With key=acct:{Org}:{User}, two different accounts never share a key.
func TestAppendKeyStringKeepsKeysApart(t *testing.T) {
	key := func(org, user string) string {
		b := append([]byte(nil), "acct:"...)
		b = AppendKeyString(b, org, ":%")
		b = append(b, ':')
		return string(AppendKeyString(b, user, ":%"))
	}
	if a, b := key("a:b", "c"), key("a", "b:c"); a == b {
		t.Fatalf("both accounts map to %q", a)
	}
	if got := key("acme", "bob"); got != "acct:acme:bob" {
		t.Fatalf("common case changed: %q", got)
	}
}
