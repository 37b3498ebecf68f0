package codec

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e connects to it.

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"example.com/golden/e2e"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// plainItem is Item without the generated methods: msgpack encodes it by
// reflection, tags and all.
type plainItem Item

func sample() *Item {
	opt := int64(-7)
	return &Item{
		ID: 42, Name: "Ada", Nick: "ada", Secret: "never written", hidden: 3, Flag: true,
		I: -1 << 40, I8: -8, I16: -300, I32: 1 << 20, U: 1 << 40, U8: 200, U16: 60000, U32: 1 << 31, U64: 1 << 63,
		F32: 1.5, F64: -2.25, Raw: []byte{0, 1, 2}, RawOpt: []byte("x"), Tags: []string{"a", "b"},
		Attrs: map[string]int{"k": 1}, Where: Point{1, 2}, Ptr: &Point{3, 4}, Opt: &opt,
		At: time.Unix(1700000000, 5).UTC(), AtOpt: time.Unix(1, 0).UTC(), Status: "active", Any: "anything",
		Wait: 3 * time.Second, Level: slog.LevelWarn,
	}
}

// viaGenerated encodes with the generated EncodeMsgpack.
func viaGenerated(t testing.TB, v *Item) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// viaReflection encodes with msgpack's reflection.
func viaReflection(t testing.TB, v *Item) []byte {
	t.Helper()
	b, err := msgpack.Marshal((*plainItem)(v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeBoth decodes b with the generated DecodeMsgpack and with
// reflection, and fails unless they agree.
func decodeBoth(t testing.TB, b []byte) *Item {
	t.Helper()
	var gen Item
	var plain plainItem
	errGen, errPlain := msgpack.Unmarshal(b, &gen), msgpack.Unmarshal(b, &plain)
	if (errGen == nil) != (errPlain == nil) {
		t.Fatalf("generated decode: %v; reflection: %v", errGen, errPlain)
	}
	if errGen != nil {
		return nil
	}
	if !same(t, &gen, (*Item)(&plain)) {
		t.Fatalf("decoded differently:\ngenerated  %+v\nreflection %+v", gen, plain)
	}
	return &gen
}

// same reports whether a and b hold the same value as msgpack sees it:
// each is written by reflection and read back into an interface{}.
// reflect.DeepEqual of the structs would tell time.Time values of one
// instant in different locations apart, and comparing the bytes would
// depend on the order of map keys, which reflection writes at random.
func same(t testing.TB, a, b *Item) bool {
	t.Helper()
	var x, y any
	if err := msgpack.Unmarshal(viaReflection(t, a), &x); err != nil {
		t.Fatal(err)
	}
	if err := msgpack.Unmarshal(viaReflection(t, b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func TestGeneratedEncodingIsReflections(t *testing.T) {
	for name, v := range map[string]*Item{"full": sample(), "zero": {}, "nil parts": {ID: 1, Tags: []string{}}} {
		t.Run(name, func(t *testing.T) {
			gen, plain := viaGenerated(t, v), viaReflection(t, v)
			if !bytes.Equal(gen, plain) {
				t.Fatalf("generated % x\nreflection % x", gen, plain)
			}
			decodeBoth(t, gen)
		})
	}
}

func TestGeneratedDecodingReadsReflections(t *testing.T) {
	want := sample()
	got := decodeBoth(t, viaReflection(t, want))
	if got.Secret != "" || got.hidden != 0 {
		t.Errorf("Secret %q, hidden %d: fields msgpack skips were read", got.Secret, got.hidden)
	}
	got.Secret, got.hidden = want.Secret, want.hidden
	if !same(t, got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	var empty Item
	if err := msgpack.Unmarshal(viaReflection(t, &Item{}), &empty); err != nil {
		t.Fatal(err)
	}
	if empty.Tags != nil || empty.Raw != nil || empty.Opt != nil || empty.Attrs != nil || empty.Ptr != nil || empty.Any != nil {
		t.Errorf("nil fields came back non-nil: %+v", empty)
	}
}

func TestGeneratedDecodingSkipsUnknownKeysInAnyOrder(t *testing.T) {
	b, err := msgpack.Marshal(map[string]any{
		"unknown": map[string]any{"deep": []any{1, "x"}}, "Tags": []string{"t"}, "name": "Bob",
		"I8": 5, "ID": 9, "nick": "", "Secret": "ignored", "Where": map[string]any{"X": 1}, "Opt": nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := decodeBoth(t, b)
	if got.ID != 9 || got.Name != "Bob" || got.I8 != 5 || got.Where.X != 1 || got.Secret != "" || len(got.Tags) != 1 {
		t.Errorf("got %+v", got)
	}
	// A nil map is a zero struct, as reflection reads it.
	got = decodeBoth(t, []byte{0xc0})
	if !reflect.DeepEqual(got, &Item{}) {
		t.Errorf("nil decoded to %+v", got)
	}
}

func TestTruncatedInputIsAnError(t *testing.T) {
	b := viaGenerated(t, sample())
	for n := range len(b) {
		var v Item
		if err := v.DecodeMsgpack(msgpack.NewDecoder(bytes.NewReader(b[:n]))); err == nil {
			t.Fatalf("DecodeMsgpack of the first %d of %d bytes: no error", n, len(b))
		}
		if err := v.ReadMsgpack(b[:n]); err == nil {
			t.Fatalf("ReadMsgpack of the first %d of %d bytes: no error", n, len(b))
		}
	}
}

// The byte-slice codec the runtime calls is the one msgpack calls.
func TestAppendAndReadMatchEncoderAndDecoder(t *testing.T) {
	v := sample()
	b, err := v.AppendMsgpack(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := viaReflection(t, v); !bytes.Equal(b, want) {
		t.Fatalf("AppendMsgpack % x\nreflection    % x", b, want)
	}
	var got Item
	if err := got.ReadMsgpack(viaReflection(t, v)); err != nil {
		t.Fatal(err)
	}
	v.Secret, v.hidden = "", 0
	if !same(t, &got, v) {
		t.Fatalf("ReadMsgpack %+v\nwant %+v", got, v)
	}
}

func TestLegacyKeepsReflection(t *testing.T) {
	var v any = &Legacy{}
	if _, ok := v.(msgpack.CustomEncoder); ok {
		t.Error("Legacy has EncodeMsgpack despite codec=reflect")
	}
	if _, ok := v.(msgpack.CustomDecoder); ok {
		t.Error("Legacy has DecodeMsgpack despite codec=reflect")
	}
}

func TestItemRepoRoundTripsThroughRedis(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)
	repo := MustNewItemRepo(rdb)
	defer repo.Close()

	want := sample()
	if err := repo.SetItem(ctx, want); err != nil {
		t.Fatal(err)
	}
	raw, err := rdb.Get(ctx, ItemKey(42)).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var plain plainItem
	if err := msgpack.Unmarshal(raw, &plain); err != nil {
		t.Fatalf("reflection cannot read what the repository wrote: %v", err)
	}
	got, err := repo.GetItem(ctx, 42)
	if err != nil {
		t.Fatal(err)
	}
	want.Secret, want.hidden = "", 0
	if !same(t, got, want) || !same(t, (*Item)(&plain), want) {
		t.Errorf("GetItem %+v\nreflection %+v\nwant %+v", got, plain, want)
	}

	// A value another program wrote by reflection reads back.
	other := sample()
	other.ID, other.Secret, other.hidden = 43, "", 0
	if err := rdb.Set(ctx, ItemKey(43), viaReflection(t, other), 0).Err(); err != nil {
		t.Fatal(err)
	}
	got, err = repo.GetItem(ctx, 43)
	if err != nil {
		t.Fatal(err)
	}
	if !same(t, got, other) {
		t.Errorf("GetItem of a reflection-written value %+v\nwant %+v", got, other)
	}
}

func FuzzCodec(f *testing.F) {
	f.Add(int64(42), "Ada", "ada", true, -1, int8(-8), int16(-300), int32(7), uint(9), uint8(200), uint16(60000), uint32(1), uint64(1<<63),
		float32(1.5), -2.25, []byte{1, 2}, "tag", int64(1700000000), []byte{0x81, 0xa2, 'I', 'D', 0x01})
	f.Add(int64(0), "", "", false, 0, int8(0), int16(0), int32(0), uint(0), uint8(0), uint16(0), uint32(0), uint64(0),
		float32(0), 0.0, []byte(nil), "", int64(0), []byte{0x82, 0xa1})
	f.Add(int64(-1), "ü", "x", false, 1<<62, int8(127), int16(-32768), int32(-1), uint(1<<63), uint8(1), uint16(1), uint32(1<<32-1), uint64(1),
		float32(-0.0), 1e300, []byte{}, "a", int64(-5), []byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, id int64, name, nick string, flag bool, i int, i8 int8, i16 int16, i32 int32,
		u uint, u8 uint8, u16 uint16, u32 uint32, u64 uint64, f32 float32, f64 float64, raw []byte, tag string, at int64, corrupt []byte) {
		v := &Item{
			ID: id, Name: name, Nick: nick, Flag: flag, I: i, I8: i8, I16: i16, I32: i32,
			U: u, U8: u8, U16: u16, U32: u32, U64: u64, F32: f32, F64: f64, Raw: raw, RawOpt: raw,
			Where: Point{i32, -i32}, At: time.Unix(at, 0), Status: Status(tag), Any: name,
		}
		if tag != "" {
			v.Tags, v.Attrs, v.Ptr, v.Opt = []string{tag, name}, map[string]int{tag: i}, &Point{X: i32}, &id
		}
		gen, plain := viaGenerated(t, v), viaReflection(t, v)
		decodeBoth(t, gen)
		decodeBoth(t, plain)
		// Reflection and the generated codec read their own and each
		// other's bytes alike; whatever they read re-encodes the same.
		a := decodeBoth(t, gen)
		b := decodeBoth(t, plain)
		if !same(t, a, b) {
			t.Fatalf("the two encodings decode differently:\n%+v\n%+v", a, b)
		}

		// Structs written as arrays read as reflection reads them.
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseArrayEncodedStructs(true)
		if err := enc.Encode((*plainItem)(v)); err != nil {
			t.Fatal(err)
		}
		decodeBoth(t, buf.Bytes())

		// Anything else: the generated codec refuses it or reads what
		// reflection reads, and never panics. Reflection itself is given
		// only what wire.Skip accepts: it allocates whatever a corrupt
		// length declares.
		var g Item
		errGen := g.ReadMsgpack(corrupt)
		if _, err := wire.Skip(corrupt); err != nil {
			if errGen == nil {
				t.Fatalf("% x: ReadMsgpack took what Skip refuses: %v", corrupt, err)
			}
			return
		}
		var r plainItem
		errRef, panicked := reflectionReads(corrupt, &r)
		switch {
		case panicked:
			if errGen == nil {
				t.Fatalf("% x: ReadMsgpack took what reflection panics on: %v", corrupt, errRef)
			}
		case (errGen == nil) != (errRef == nil):
			t.Fatalf("% x: generated %v, reflection %v", corrupt, errGen, errRef)
		case errGen == nil && !reflect.DeepEqual(&g, (*Item)(&r)):
			t.Fatalf("% x: generated %+v\nreflection %+v", corrupt, g, r)
		}
	})
}
