package runtime

import (
	goruntime "runtime"
	"testing"
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
