package engine

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime/internal/sizehint"
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
	// hint is the capacity the next encoding starts with
	// (runtime/internal/sizehint).
	hint sizehint.Hint
}

func newCodec[V any](enc func(*V, []byte) ([]byte, error), dec func(*V, []byte) error) *codec[V] {
	c := &codec[V]{append: enc, read: dec}
	if c.read == nil {
		c.read = func(v *V, b []byte) error { return wire.Unmarshal(b, v) }
	}
	return c
}

// encode returns v's bytes in a buffer of their own: go-redis may hold
// them after a call returns (a hook, a pipeline), so none is reused.
func (c *codec[V]) encode(v *V) ([]byte, error) {
	if c.append == nil {
		return msgpack.Marshal(v)
	}
	b, err := c.append(v, make([]byte, 0, c.hint.Cap()))
	if err == nil {
		c.hint.Saw(int64(len(b)))
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
