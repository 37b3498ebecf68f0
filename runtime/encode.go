package runtime

import (
	"sync/atomic"

	"github.com/vmihailenco/msgpack/v5"
)

// codec turns values into the bytes stored in Redis and back: the
// generated AppendMsgpack and ReadMsgpack when Glue has them, msgpack's
// reflection otherwise.
type codec[V any] struct {
	append func(*V, []byte) ([]byte, error)
	read   func(*V, []byte) error
	// hint is the largest value encoded so far, so the next encoding
	// allocates its buffer once instead of growing it.
	hint atomic.Int64
}

func newCodec[V any](enc func(*V, []byte) ([]byte, error), dec func(*V, []byte) error) *codec[V] {
	c := &codec[V]{append: enc, read: dec}
	if c.read == nil {
		c.read = func(v *V, b []byte) error { return msgpack.Unmarshal(b, v) }
	}
	c.hint.Store(64)
	return c
}

// encode returns v's bytes in a buffer of their own: go-redis may hold
// them after a call returns (a hook, a pipeline), so none is reused.
func (c *codec[V]) encode(v *V) ([]byte, error) {
	if c.append == nil {
		return msgpack.Marshal(v)
	}
	hint := c.hint.Load()
	b, err := c.append(v, make([]byte, 0, hint))
	if n := int64(cap(b)); err == nil && n > hint {
		c.hint.CompareAndSwap(hint, n)
	}
	return b, err
}

// decode returns the value b holds.
func (c *codec[V]) decode(b []byte) (*V, error) {
	v := new(V)
	if err := c.read(v, b); err != nil {
		return nil, err
	}
	return v, nil
}
