package track

import (
	"bufio"
	"errors"
	"slices"
	"strings"
	"testing"
)

// readWire reads one reply from in, as a keyed session reads its
// connection.
func readWire(in string) (reply, error) {
	w := &wire{r: bufio.NewReader(strings.NewReader(in))}
	return w.read(0)
}

// What a keyed session reads from Redis: each kind of reply it may meet,
// and each malformation refused with errWire before it allocates.
func TestAKeyedSessionReadsRESP3AndRefusesWhatNoRedisSends(t *testing.T) {
	keys := func(r reply) []string {
		var ks []string
		for _, e := range r.elems {
			ks = append(ks, e.str)
		}
		return ks
	}
	for _, tc := range []struct {
		name, in string
		check    func(reply) bool
	}{
		{"a PING's answer", "$3\r\n123\r\n", func(r reply) bool { return r.kind == '$' && r.str == "123" }},
		{"a simple string", "+OK\r\n", func(r reply) bool { return r.str == "OK" }},
		{"an error", "-NOPERM no\r\n", func(r reply) bool { return r.err() != nil && r.err().Error() == "NOPERM no" }},
		{"a blob error", "!5\r\nBUSY!\r\n", func(r reply) bool { return r.err() != nil }},
		{"EXISTS's count", ":2\r\n", func(r reply) bool { return r.kind == ':' && r.n == 2 }},
		{"a null bulk", "$-1\r\n", func(r reply) bool { return r.null }},
		{"RESP3's null", "_\r\n", func(r reply) bool { return r.null }},
		{"a boolean", "#t\r\n", func(r reply) bool { return r.n == 1 }},
		{"INFO's verbatim text", "=10\r\ntxt:run_id\r\n", func(r reply) bool { return r.str == "run_id" }},
		{"an invalidation", ">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\np:1\r\n$3\r\np:2\r\n", func(r reply) bool {
			return r.kind == '>' && r.elems[0].str == "invalidate" && slices.Equal(keys(r.elems[1]), []string{"p:1", "p:2"})
		}},
		{"a flush's invalidation", ">2\r\n$10\r\ninvalidate\r\n_\r\n", func(r reply) bool { return r.elems[1].null }},
		{"HELLO's map", "%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n", func(r reply) bool { return len(r.elems) == 4 }},
		{"an attribute before its reply", "|1\r\n+ttl\r\n:5\r\n:7\r\n", func(r reply) bool { return r.kind == ':' && r.n == 7 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := readWire(tc.in)
			if err != nil || !tc.check(r) {
				t.Fatalf("read %q: %+v, %v", tc.in, r, err)
			}
		})
	}
	for _, tc := range []struct{ name, in string }{
		{"an unknown type", "?1\r\n"},
		{"a bulk longer than maxBulk", "$1048577\r\n"},
		{"a length below -1", "*-2\r\n"},
		{"more elements than maxElems", "*65537\r\n"},
		{"a map of more than maxElems pairs", "%65537\r\n"},
		{"a length that is no number", "$x\r\n"},
		{"a bulk not ended by CRLF", "$3\r\nabcde\r\n"},
		{"a line without CR", "+OK\n"},
		{"an empty line", "\r\n"},
		{"an integer that is no number", ":1x\r\n"},
		{"a boolean that is neither", "#x\r\n"},
		{"a verbatim string without a format", "=2\r\nab\r\n"},
		{"nesting deeper than maxDepth", strings.Repeat("*1\r\n", maxDepth+1) + ":1\r\n"},
		{"a line longer than the buffer", "+" + strings.Repeat("a", 5000) + "\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := readWire(tc.in); !errors.Is(err, errWire) {
				t.Fatalf("read %.40q: %+v, %v; want errWire", tc.in, r, err)
			}
		})
	}
}

// Whatever the bytes, a read returns a reply or an error: it never
// panics, and never allocates beyond the bounds.
func FuzzWire(f *testing.F) {
	for _, s := range []string{
		"$3\r\n123\r\n", ":2\r\n", ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\np:1\r\n",
		">2\r\n$10\r\ninvalidate\r\n_\r\n", "%1\r\n+a\r\n*1\r\n:1\r\n", "|1\r\n+a\r\n+b\r\n+c\r\n", "=8\r\ntxt:abcd\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := readWire(in)
		if err == nil && r.kind == 0 {
			t.Fatalf("read %q: no reply and no error", in)
		}
	})
}
