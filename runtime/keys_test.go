package runtime

import (
	"net/url"
	"strings"
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

// FuzzAppendKeyString attacks the promise that one user's input never
// reaches another entity's keys: for key=acct:{Org}:{User}, the key holds
// the prefix, then exactly two parts, each free of the template's
// punctuation and decoding back to the value that made it, so no two
// accounts share a key and no value can step outside acct:.
func FuzzAppendKeyString(f *testing.F) {
	for _, seed := range [][2]string{{"acme", "bob"}, {"a:b", "c"}, {"a", "b:c"}, {"%3A", ":"}, {"", ""}, {"\r\n*", "\x00\xff"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, org, user string) {
		b := append([]byte(nil), "acct:"...)
		b = AppendKeyString(b, org, ":%")
		b = append(b, ':')
		key := string(AppendKeyString(b, user, ":%"))

		rest, ok := strings.CutPrefix(key, "acct:")
		if !ok {
			t.Fatalf("key %q left the entity's prefix", key)
		}
		parts := strings.Split(rest, ":")
		if len(parts) != 2 {
			t.Fatalf("key %q has %d parts, want 2: a value's ':' got through", key, len(parts))
		}
		for i, want := range []string{org, user} {
			if got, err := url.PathUnescape(parts[i]); err != nil || got != want {
				t.Fatalf("part %d of %q decodes to %q, %v; want %q", i, key, got, err, want)
			}
		}
	})
}
