package wire

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every writer produces the bytes msgpack writes for the same Go value.
func TestAppendWritesWhatMsgpackWrites(t *testing.T) {
	str := func(n int) string { return strings.Repeat("x", n) }
	bin := func(n int) []byte { return bytes.Repeat([]byte{7}, n) }
	cases := []struct {
		name string
		got  []byte
		v    any
	}{
		{"nil", AppendNil(nil), nil},
		{"true", AppendBool(nil, true), true},
		{"false", AppendBool(nil, false), false},
		{"fixstr", AppendString(nil, "ada"), "ada"},
		{"str8", AppendString(nil, str(32)), str(32)},
		{"str16", AppendString(nil, str(300)), str(300)},
		{"str32", AppendString(nil, str(70000)), str(70000)},
		{"bin8", AppendBytes(nil, bin(3)), bin(3)},
		{"bin16", AppendBytes(nil, bin(300)), bin(300)},
		{"bin32", AppendBytes(nil, bin(70000)), bin(70000)},
		{"nil bytes", AppendBytes(nil, nil), []byte(nil)},
		{"int small", AppendInt(nil, 5), 5},
		{"int negfix", AppendInt(nil, -5), -5},
		{"int -100", AppendInt(nil, -100), -100},
		{"int -1000", AppendInt(nil, -1000), -1000},
		{"int -100000", AppendInt(nil, -100000), -100000},
		{"int min", AppendInt(nil, math.MinInt64), math.MinInt64},
		{"int 200", AppendInt(nil, 200), 200},
		{"int 70000", AppendInt(nil, 70000), 70000},
		{"int 1<<40", AppendInt(nil, 1<<40), 1 << 40},
		{"uint", AppendUint(nil, 1<<40), uint(1 << 40)},
		{"int8", AppendInt8(nil, -3), int8(-3)},
		{"int16", AppendInt16(nil, 3), int16(3)},
		{"int32", AppendInt32(nil, -3), int32(-3)},
		{"int64", AppendInt64(nil, 3), int64(3)},
		{"uint8", AppendUint8(nil, 3), uint8(3)},
		{"uint16", AppendUint16(nil, 3), uint16(3)},
		{"uint32", AppendUint32(nil, 3), uint32(3)},
		{"uint64", AppendUint64(nil, 3), uint64(3)},
		{"float32", AppendFloat32(nil, 1.5), float32(1.5)},
		{"float64", AppendFloat64(nil, -2.25), -2.25},
		{"time 4 bytes", AppendTime(nil, time.Unix(1700000000, 0)), time.Unix(1700000000, 0)},
		{"time 8 bytes", AppendTime(nil, time.Unix(1700000000, 5)), time.Unix(1700000000, 5)},
		{"time 12 bytes", AppendTime(nil, time.Unix(-5, 7)), time.Unix(-5, 7)},
		{"time zero", AppendTime(nil, time.Time{}), time.Time{}},
		{"fixmap", AppendMapLen(nil, 3), nil},
		{"map16", AppendMapLen(nil, 300), nil},
		{"map32", AppendMapLen(nil, 70000), nil},
		{"fixarray", AppendArrayLen(nil, 3), nil},
		{"array16", AppendArrayLen(nil, 300), nil},
		{"array32", AppendArrayLen(nil, 70000), nil},
	}
	for _, c := range cases {
		var want []byte
		switch {
		case strings.HasPrefix(c.name, "fixmap"), strings.HasPrefix(c.name, "map"):
			want = header(t, func(e *msgpack.Encoder) error { return e.EncodeMapLen(mapLen(c.name)) })
		case strings.HasPrefix(c.name, "fixarray"), strings.HasPrefix(c.name, "array"):
			want = header(t, func(e *msgpack.Encoder) error { return e.EncodeArrayLen(mapLen(c.name)) })
		default:
			want = marshal(t, c.v)
		}
		if !bytes.Equal(c.got, want) {
			t.Errorf("%s: wrote % x, msgpack writes % x", c.name, head(c.got), head(want))
		}
	}
}

func mapLen(name string) int {
	switch {
	case strings.HasSuffix(name, "16"):
		return 300
	case strings.HasSuffix(name, "32"):
		return 70000
	}
	return 3
}

func header(t *testing.T, f func(*msgpack.Encoder) error) []byte {
	var buf bytes.Buffer
	if err := f(msgpack.NewEncoder(&buf)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func head(b []byte) []byte { return b[:min(len(b), 12)] }

// Readers accept every encoding msgpack accepts for the type and decode it
// to what msgpack decodes, with the input's remainder intact.
func TestReadersDecodeWhatMsgpackDecodes(t *testing.T) {
	inputs := []any{
		nil, true, false, 0, 5, -5, -100, 200, -1000, 70000, -100000, int64(1 << 40), uint64(math.MaxUint64),
		int8(-3), int16(-300), int32(-70000), uint8(200), uint16(60000), uint32(1 << 31),
		float32(1.5), -2.25, "", "ada", strings.Repeat("s", 300), []byte("bin"), []byte{},
		time.Unix(1700000000, 0), time.Unix(1700000000, 5), time.Unix(-5, 7), time.Time{},
		"2024-01-02T03:04:05Z", []int{1, 2}, map[string]int{"a": 1},
	}
	type reader struct {
		name string
		read func([]byte) (any, []byte, error)
		into func() any // a pointer msgpack.Unmarshal decodes into
	}
	wrap := func(f any) func([]byte) (any, []byte, error) {
		fv := reflect.ValueOf(f)
		return func(b []byte) (any, []byte, error) {
			out := fv.Call([]reflect.Value{reflect.ValueOf(b)})
			err, _ := out[2].Interface().(error)
			return out[0].Interface(), out[1].Interface().([]byte), err
		}
	}
	readers := []reader{
		{"bool", wrap(ReadBool), func() any { return new(bool) }},
		{"int64", wrap(ReadInt64), func() any { return new(int64) }},
		{"uint64", wrap(ReadUint64), func() any { return new(uint64) }},
		{"float32", wrap(ReadFloat32), func() any { return new(float32) }},
		{"float64", wrap(ReadFloat64), func() any { return new(float64) }},
		{"string", wrap(ReadString), func() any { return new(string) }},
		{"bytes", wrap(ReadBytes), func() any { return new([]byte) }},
		{"time", wrap(ReadTime), func() any { return new(time.Time) }},
	}
	trailer := []byte{0xa1, 'z'}
	for _, in := range inputs {
		b := append(marshal(t, in), trailer...)
		for _, r := range readers {
			want := r.into()
			wantErr := msgpack.Unmarshal(b, want)
			got, rest, err := r.read(b)
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%s of %#v: error %v, msgpack's %v", r.name, in, err, wantErr)
				continue
			}
			if err != nil {
				continue
			}
			if w := reflect.ValueOf(want).Elem().Interface(); !reflect.DeepEqual(got, w) {
				t.Errorf("%s of %#v = %#v, msgpack reads %#v", r.name, in, got, w)
			}
			if !bytes.Equal(rest, trailer) {
				t.Errorf("%s of %#v left % x, want the trailer", r.name, in, rest)
			}
		}
	}
}

func TestLengthsAndKeys(t *testing.T) {
	b := marshal(t, map[string][]int{"k": {1, 2, 3}})
	n, b, err := ReadMapLen(b)
	if err != nil || n != 1 {
		t.Fatalf("ReadMapLen = %d, %v", n, err)
	}
	k, b, err := ReadStringBytes(b)
	if err != nil || string(k) != "k" {
		t.Fatalf("ReadStringBytes = %q, %v", k, err)
	}
	if n, _, err = ReadArrayLen(b); err != nil || n != 3 {
		t.Fatalf("ReadArrayLen = %d, %v", n, err)
	}
	for _, in := range [][]byte{{codeNil}, marshal(t, []int(nil)), marshal(t, map[string]int(nil))} {
		if n, _, err := ReadArrayLen(in); n != -1 || err != nil {
			t.Fatalf("ReadArrayLen(nil) = %d, %v; want -1", n, err)
		}
	}
	if rest, ok := ReadNil([]byte{codeNil, 1}); !ok || len(rest) != 1 {
		t.Fatal("ReadNil missed a nil")
	}
	if _, ok := ReadNil([]byte{1}); ok {
		t.Fatal("ReadNil took a non-nil")
	}
}

// Corrupt or cut input is an error that wraps io.ErrUnexpectedEOF when the
// input ends early, and a header cannot promise more than the input holds.
func TestCorruptInput(t *testing.T) {
	whole := marshal(t, map[string]any{"a": []any{1, "xyz", 2.5, []byte("p"), time.Unix(1, 5)}})
	for i := range len(whole) {
		if _, err := Skip(whole[:i]); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Skip of the first %d of %d bytes: %v", i, len(whole), err)
		}
	}
	huge := []any{
		[]byte{codeArray32, 0xff, 0xff, 0xff, 0xff, 1},
		[]byte{codeMap32, 0x7f, 0xff, 0xff, 0xff, 1, 1},
		[]byte{codeStr32, 0xff, 0xff, 0xff, 0xff, 'a'},
	}
	for _, h := range huge {
		b := h.([]byte)
		if _, err := Skip(b); err == nil {
			t.Errorf("Skip(% x) accepted a length the input cannot hold", b)
		}
	}
	if _, _, err := ReadArrayLen(huge[0].([]byte)); err == nil {
		t.Error("ReadArrayLen accepted 4G elements in one byte")
	}
	if _, _, err := ReadMapLen(huge[1].([]byte)); err == nil {
		t.Error("ReadMapLen accepted 2G pairs in two bytes")
	}
	if _, err := Skip([]byte{0xc1}); err == nil {
		t.Error("Skip accepted the never-used code 0xc1")
	}
}

// FuzzSkip checks Skip against msgpack's own: what Skip takes as a value
// msgpack skips to the same place, an invalid code is invalid to both, and
// Skip never panics. (Input Skip finds cut short is left out: msgpack
// allocates whatever a corrupt length claims before it finds out, which
// stalls the fuzzer; TestCorruptInput covers truncation. So is nesting
// deeper than MaxDepth, which msgpack takes until its stack overflows.)
func FuzzSkip(f *testing.F) {
	for _, v := range []any{1, "a", []any{1, map[string]any{"b": []byte("c")}}, time.Unix(1, 1), 1.5, nil} {
		f.Add(marshal(f, v))
	}
	f.Add(append(bytes.Repeat([]byte{0x91}, MaxDepth), 0xc0))
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, err := Skip(b)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrTooDeep) {
			return
		}
		r := bytes.NewReader(b)
		wantErr := msgpack.NewDecoder(r).Skip()
		switch {
		case err != nil && wantErr == nil:
			t.Fatalf("Skip(% x) = %v; msgpack skips it", b, err)
		case err == nil && wantErr != nil:
			t.Fatalf("Skip(% x) took it; msgpack: %v", b, wantErr)
		case err == nil && len(rest) != r.Len():
			t.Fatalf("Skip(% x) left %d bytes, msgpack %d", b, len(rest), r.Len())
		}
	})
}
