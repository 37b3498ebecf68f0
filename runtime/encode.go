package runtime

import (
	"sync/atomic"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// codec turns values into the bytes stored in Redis and back: the
// generated AppendMsgpack and ReadMsgpack when Glue has them, msgpack's
// reflection otherwise. Every read path (Get, GetMany, refresh, loads)
// decodes through it, so it is where bytes from Redis are checked: the
// generated decoder checks each length before it allocates, and
// reflection is given only what wire.Skip has accepted (every declared
// length within the value, nesting at most wire.MaxDepth deep).
type codec[V any] struct {
	append func(*V, []byte) ([]byte, error)
	read   func(*V, []byte) error
	// hint is the capacity the next encoding starts with (nextHint), and
	// last the size of the last value encoded.
	hint, last atomic.Int64
}

// minHint is the smallest buffer an encoding starts with.
const minHint = 64

func newCodec[V any](enc func(*V, []byte) ([]byte, error), dec func(*V, []byte) error) *codec[V] {
	c := &codec[V]{append: enc, read: dec}
	if c.read == nil {
		c.read = func(v *V, b []byte) error { return wire.Unmarshal(b, v) }
	}
	c.hint.Store(minHint)
	return c
}

// encode returns v's bytes in a buffer of their own: go-redis may hold
// them after a call returns (a hook, a pipeline), so none is reused.
func (c *codec[V]) encode(v *V) ([]byte, error) {
	if c.append == nil {
		return msgpack.Marshal(v)
	}
	b, err := c.append(v, make([]byte, 0, c.hint.Load()))
	if err == nil {
		n := int64(len(b))
		c.hint.Store(nextHint(c.last.Swap(n), n))
	}
	return b, err
}

// nextHint is the buffer to start the next encoding with, after values of
// prev and then n bytes: room for the smaller of the two with a quarter to
// spare, so that sizes varying a little do not grow the buffer again. One
// huge value among small ones moves it not at all, and a small write
// costs what a small write costs (shrinking by quarters, 200 writes of 12
// bytes after one of 4 MiB allocated 6.8 MB); values that stay large move
// it on the second, and the one before grows its buffer as append does.
func nextHint(prev, n int64) int64 {
	m := min(prev, n)
	return max(m+m/4, minHint)
}

// decode returns the value b holds.
func (c *codec[V]) decode(b []byte) (*V, error) {
	v := new(V)
	if err := c.read(v, b); err != nil {
		return nil, err
	}
	return v, nil
}
