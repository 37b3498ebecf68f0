package layout

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/wire/wiretest"
)

type item struct {
	field string
	exp   int64
	value string
}

func readAll(t *testing.T, b []byte) []item {
	t.Helper()
	var out []item
	if err := ReadItems(b, func(field string, exp int64, value []byte) error {
		out = append(out, item{field, exp, string(value)})
		return nil
	}); err != nil {
		t.Fatalf("ReadItems: %v", err)
	}
	return out
}

func TestItemsRoundTrip(t *testing.T) {
	want := []item{{"a", 0, "x"}, {"", -1, ""}, {"long%41", 1_700_000_000_000, string(make([]byte, 300))}}
	var b []byte
	for _, it := range want {
		b = AppendItem(b, it.field, it.exp, []byte(it.value))
	}
	if got := readAll(t, b); !slices.Equal(got, want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	stop := errors.New("stop")
	calls := 0
	err := ReadItems(b, func(string, int64, []byte) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("each's error: %v after %d calls, want it returned after 1", err, calls)
	}
}

// hostileForms are bytes not in the runtime's form, each declaring more
// than it holds or cut short.
func hostileForms() map[string][]byte {
	huge := binary.AppendUvarint(nil, 1<<63)
	ok := AppendItem(nil, "f", 0, []byte("v"))
	return map[string][]byte{
		"a field length cut short":          {0x80},
		"a field length past 64 bits":       {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"a field of 2^63 bytes":             append(slices.Clone(huge), 'f'),
		"a field one byte longer than left": {0x03, 'a', 'b'},
		"no expiry after the field":         {0x01, 'f'},
		"an expiry cut short":               {0x01, 'f', 0x80},
		"no value length":                   {0x01, 'f', 0x00},
		"a value of 2^63 bytes":             append([]byte{0x01, 'f', 0x00}, huge...),
		"a value one byte longer than left": {0x01, 'f', 0x00, 0x02, 'v'},
		"a good item, then one cut short":   append(slices.Clone(ok), 0x05, 'g'),
	}
}

// ReadItems refuses bytes not in the runtime's form without a panic and
// without allocating from a length they declare.
func TestReadItemsRefusesHostileForms(t *testing.T) {
	for name, b := range hostileForms() {
		var err error
		if n := wiretest.Allocated(3, func() {
			err = ReadItems(b, func(string, int64, []byte) error { return nil })
		}); n > 16<<10 {
			t.Errorf("%s: allocated %d bytes", name, n)
		}
		if !errors.Is(err, errForm) {
			t.Errorf("%s: %v, want %v", name, err, errForm)
		}
	}
}

func FuzzReadItems(f *testing.F) {
	for _, b := range hostileForms() {
		f.Add(b)
	}
	f.Add(AppendItem(AppendItem(nil, "a", 7, []byte("x")), "b", 0, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		read := 0
		_ = ReadItems(b, func(field string, _ int64, value []byte) error {
			read += len(field) + len(value)
			return nil
		})
		if read > len(b) {
			t.Fatalf("read %d bytes of items from %d bytes", read, len(b))
		}
	})
}

func TestHashBytes(t *testing.T) {
	b, err := hashBytes(map[string]string{"b": "2", "a": "1", "%next": "-", "%41": "escaped", "%": "lone", "%A": "upper"})
	if err != nil {
		t.Fatal(err)
	}
	want := []item{{"%", 0, "lone"}, {"%41", 0, "escaped"}, {"%A", 0, "upper"}, {"a", 0, "1"}, {"b", 0, "2"}}
	if got := readAll(t, b); !slices.Equal(got, want) {
		t.Errorf("items %+v, want %+v: sorted by field, reserved fields (%%next) left out", got, want)
	}
	if b, err := hashBytes(map[string]string{"%null": "", "a": "1"}); err != nil || string(b) != string(Null) {
		t.Errorf("an absent owner's placeholder reads %q, %v; want Null", b, err)
	}
	for name, m := range map[string]map[string]string{"no fields": {}, "only reserved fields": {"%next": "5"}} {
		if b, err := hashBytes(m); !errors.Is(err, redis.Nil) {
			t.Errorf("%s: %q, %v; want redis.Nil", name, b, err)
		}
	}
}

func TestReserved(t *testing.T) {
	for field, want := range map[string]bool{
		"%next": true, "%null": true, "%a": true, "%z": true,
		"%": false, "%A": false, "%41": false, "%{": false, "next": false, "": false,
	} {
		if got := reserved(field); got != want {
			t.Errorf("reserved(%q) = %v, want %v", field, got, want)
		}
	}
}
