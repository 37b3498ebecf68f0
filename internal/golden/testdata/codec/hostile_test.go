package codec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"example.com/golden/e2e"
	"github.com/vmihailenco/msgpack/v5"

	hotkey "github.com/hotkeygen/hotkeygen/runtime"
	"github.com/hotkeygen/hotkeygen/runtime/wire/wiretest"
)

// readBudget is what a read refusing a value of n bytes may allocate:
// go-redis's copies of the reply, the error, and what decoding did before
// the fault, all bounded by n; never anything sized by a length the value
// declares.
func readBudget(n int) uint64 { return uint64(4*n) + 64<<10 }

// decodePath is one way the bytes of a value in Redis reach a decoder.
type decodePath struct {
	name string
	wrap func([]byte) []byte // where in the value the hostile bytes sit
	read func(ctx context.Context, i int, b []byte) error
}

// Every hostile value is refused with ErrDecode by the generated
// repositories, wherever it sits: as the whole value of a generated
// entity, in a field the generated codec reads itself (a nested struct, a
// slice), in one it leaves to reflection (Any, and Level with its
// MarshalText), and in an entity with codec=reflect; through Get and
// GetMany against Redis, and through ReadMsgpack. None
// panics or allocates from a length the value declares.
func TestHostileValuesThroughRepositories(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)
	quiet := hotkey.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) // big values are warned about
	items, legacies := MustNewItemRepo(rdb, quiet), MustNewLegacyRepo(rdb, quiet)
	defer items.Close()
	defer legacies.Close()
	// The first reads of a repository allocate once for good.
	_, _ = items.GetItem(ctx, 1)
	_, _ = items.GetItems(ctx, []int64{1, 2})
	_, _ = legacies.GetLegacy(ctx, "x")
	_, _ = legacies.GetLegacies(ctx, []string{"x", "y"})

	getItem := func(ctx context.Context, i int, b []byte) error {
		id := int64(90000 + i)
		if err := rdb.Set(ctx, ItemKey(id), b, 0).Err(); err != nil {
			return err
		}
		if _, err := items.GetItem(ctx, id); !errors.Is(err, hotkey.ErrDecode) {
			return fmt.Errorf("GetItem = %v, want ErrDecode", err)
		}
		if _, err := items.GetItems(ctx, []int64{1, id}); !errors.Is(err, hotkey.ErrDecode) {
			return fmt.Errorf("GetItems = %v, want ErrDecode", err)
		}
		return nil
	}
	getLegacy := func(ctx context.Context, i int, b []byte) error {
		id := fmt.Sprint("hostile-", i)
		if err := rdb.Set(ctx, LegacyKey(id), b, 0).Err(); err != nil {
			return err
		}
		if _, err := legacies.GetLegacy(ctx, id); !errors.Is(err, hotkey.ErrDecode) {
			return fmt.Errorf("GetLegacy = %v, want ErrDecode", err)
		}
		if _, err := legacies.GetLegacies(ctx, []string{"x", id}); !errors.Is(err, hotkey.ErrDecode) {
			return fmt.Errorf("GetLegacies = %v, want ErrDecode", err)
		}
		return nil
	}
	readItem := func(_ context.Context, _ int, b []byte) error {
		var v Item
		if err := v.ReadMsgpack(b); err == nil {
			return errors.New("ReadMsgpack accepted it")
		}
		// Not msgpack.Unmarshal, through DecodeMsgpack: msgpack's Decoder
		// reads the raw value first, growing its buffer toward whatever
		// length the value declares. No path of the runtime takes it.
		return nil
	}
	whole := func(b []byte) []byte { return b }
	field := func(key string) func([]byte) []byte {
		return func(b []byte) []byte { return wiretest.InField(key, b) }
	}
	paths := []decodePath{
		{"Item by Get", whole, getItem},
		{"Item.Any by Get", field("Any"), getItem},
		{"Item.Level by Get", field("Level"), getItem},
		{"Item.Where by Get", field("Where"), getItem},
		{"Item.Tags by Get", field("Tags"), getItem},
		{"Item.Attrs by Get", field("Attrs"), getItem},
		{"Item by ReadMsgpack", whole, readItem},
		{"Item.Any by ReadMsgpack", field("Any"), readItem},
		{"Item.Ptr by ReadMsgpack", field("Ptr"), readItem},
		{"Legacy by Get", whole, getLegacy},
		{"Legacy.Name by Get", field("Name"), getLegacy},
	}
	for i, h := range wiretest.Hostile() {
		for _, p := range paths {
			t.Run(h.Name+"/"+p.name, func(t *testing.T) {
				b := p.wrap(h.Bytes)
				var err error
				n := wiretest.Allocated(1, func() {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("panic: %v", r)
						}
					}()
					err = p.read(ctx, i, b)
				})
				if err != nil {
					t.Fatal(err)
				}
				// Get and GetMany both read the value, and Set sent it.
				if max := 3 * readBudget(len(b)); n > max {
					t.Fatalf("reading %d bytes allocated %d bytes, more than %d", len(b), n, max)
				}
			})
		}
	}
}

// A struct written as an array of its fields, as msgpack writes it with
// UseArrayEncodedStructs (and other clients write tuples), reads as
// reflection reads it, nested structs included; an array of another
// length is refused by both.
func TestArrayEncodedStructs(t *testing.T) {
	encode := func(v any) []byte {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseArrayEncodedStructs(true)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	want := sample()
	want.Secret, want.hidden = "", 0
	b := encode((*plainItem)(want))
	if b[0] != 0xdc && b[0]&0xf0 != 0x90 {
		t.Fatalf("msgpack wrote % x, not an array", b[:4])
	}
	got := decodeBoth(t, b)
	if !same(t, got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	var direct Item
	if err := direct.ReadMsgpack(b); err != nil || !same(t, &direct, want) {
		t.Fatalf("ReadMsgpack: %v, %+v", err, direct)
	}

	// The neighbours: an empty array zeroes the struct, nil too; an array
	// of another number of fields is an error, as in reflection.
	for _, b := range [][]byte{{0x90}, {0xc0}, {0x91, 0x01}, encode([]any{1, "x"})} {
		v := sample()
		p := plainItem(*sample())
		errGen, errRef := v.ReadMsgpack(b), msgpack.Unmarshal(b, &p)
		if (errGen == nil) != (errRef == nil) {
			t.Fatalf("% x: generated %v, reflection %v", b, errGen, errRef)
		}
		if errGen == nil && !reflect.DeepEqual(v, (*Item)(&p)) {
			t.Fatalf("% x: generated %+v, reflection %+v", b, v, p)
		}
	}
	if !same(t, decodeBoth(t, []byte{0x90}), &Item{}) {
		t.Fatal("an empty array did not zero the struct")
	}
}
