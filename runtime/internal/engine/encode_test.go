package engine

import (
	goruntime "runtime"
	"testing"

	"github.com/hotkeygen/hotkeygen/runtime/wire/wiretest"
)

// blob is a value whose encoding is its bytes, appended the way generated
// AppendMsgpack appends: to the buffer it is given, growing it as needed.
type blob struct{ b []byte }

func appendBlob(v *blob, b []byte) ([]byte, error) { return append(b, v.b...), nil }

// A small write costs what a small write costs, whatever was written
// before it: 200 writes of 12 bytes after one of 4 MiB allocated 6.8 MB
// while the encoder's buffer shrank by quarters.
func TestSmallWritesAfterABigOneAllocateLittle(t *testing.T) {
	c := newCodec(appendBlob, nil)
	small := &blob{make([]byte, 12)}
	for range 10 { // the sizes the entity usually has
		if _, err := c.encode(small); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.encode(&blob{make([]byte, 4<<20)}); err != nil {
		t.Fatal(err)
	}
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range 200 {
		if _, err := c.encode(small); err != nil {
			t.Fatal(err)
		}
	}
	goruntime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("200 writes of 12 bytes after one of 4 MiB allocated %d bytes, want under 64 KiB", got)
	}
}

// Values that stay large keep a buffer their size: only the first of a
// run of them grows its buffer.
func TestEncodingHintFollowsLastingSizes(t *testing.T) {
	c := newCodec(appendBlob, nil)
	big := &blob{make([]byte, 10_000)}
	for range 3 {
		if _, err := c.encode(big); err != nil {
			t.Fatal(err)
		}
	}
	if got := testing.AllocsPerRun(20, func() { c.encode(big) }); got != 1 {
		t.Fatalf("an encoding of a size seen before made %v allocations, want 1", got)
	}
}

// The codec's decode, which every path calls, refuses the values itself.
func TestCodecDecodeRefusesHostileValues(t *testing.T) {
	c := newCodec[struct {
		ID   int64
		Name string
	}](nil, nil)
	for _, h := range wiretest.Hostile() {
		var err error
		if n := wiretest.Allocated(3, func() { _, err = c.decode(h.Bytes) }); n > uint64(2*len(h.Bytes))+16<<10 {
			t.Errorf("%s: decode allocated %d bytes", h.Name, n)
		}
		if err == nil {
			t.Errorf("%s: decoded", h.Name)
		}
	}
}

// After one huge value, the encoder's buffer comes back down to the size
// of the values written: one 4 MiB Set once made every later 12-byte Set
// allocate 4.2 MB.
func TestEncodeBufferFollowsValueSizes(t *testing.T) {
	type blob struct{ B []byte }
	c := newCodec(func(v *blob, b []byte) ([]byte, error) { return append(b, v.B...), nil }, nil)
	big, small := &blob{make([]byte, 4<<20)}, &blob{make([]byte, 12)}
	encode := func(v *blob) uint64 {
		return wiretest.Allocated(1, func() {
			if b, err := c.encode(v); err != nil || len(b) != len(v.B) {
				t.Fatalf("encode: %d bytes, %v", len(b), err)
			}
		})
	}
	encode(big)
	var total uint64
	for i := range 30 {
		n := encode(small)
		total += n
		if i >= 10 && n > 256 {
			t.Fatalf("the %dth 12-byte value after a 4 MiB one allocated %d bytes", i+1, n)
		}
	}
	if total > 2*uint64(len(big.B)) {
		t.Fatalf("30 small values after a big one allocated %d bytes in all, more than twice the big one", total)
	}
	// Sizes within a quarter of the last one fit the buffer at once.
	sizes := []int{1000, 1200, 1000, 1240, 1100, 1300}
	encode(&blob{make([]byte, sizes[0])})
	for i, n := range sizes[1:] {
		if got := encode(&blob{make([]byte, n)}); got > uint64(2*n) {
			t.Errorf("%d bytes after %d: allocated %d, the buffer grew", n, sizes[i], got)
		}
	}
}
