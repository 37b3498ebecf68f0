package engine

import (
	"bytes"
	"fmt"

	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/wire"
)

// This file is where a Cache decodes what it reads through its layout
// (c.layout: how its values sit in Redis, a String per key or a
// collection's hash). The reads themselves are runtime/internal/reads',
// and the writes take the write path (write.go).

// decodeValue turns bytes read from Redis into a value: nil with an error
// wrapping ErrNotFound for layout.Null, or an ErrDecode error. Every read
// of a value, one or a batch, first or refreshed, decodes here.
func decodeValue[K comparable, V any](c *Cache[K, V], key string, b []byte) (*V, error) {
	if bytes.Equal(b, layout.Null) {
		return nil, opErr(c.layout.ReadOp(), key, ErrNotFound)
	}
	v, err := decodeRead(c, c.codec, key, b)
	if err != nil {
		return nil, opErr(c.layout.ReadOp(), key, err)
	}
	return v, nil
}

// decodeRead decodes b, read from Redis under key, with cd: c's codec, or
// that of a collection's items, one of which HGet reads. A value past the
// size limit is logged (sizes); bytes that do not decode are counted
// (Stats.DecodeErrors) and fail with ErrDecode.
func decodeRead[T any, K comparable, V any](c *Cache[K, V], cd *codec[T], key string, b []byte) (*T, error) {
	c.sizes.check("read", key, len(b))
	v, err := cd.decode(b)
	if err != nil {
		c.count.decodeErrors.Add(1)
		if isMap(b) {
			err = foreignValue{err}
		}
		return nil, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return v, nil
}

// foreignValue is the decode error of bytes that are a whole msgpack map,
// as every build writes a value, but not one of this build's shape:
// another build's (a struct changed without version=; see
// docs/changing-structs.md). A read with a loader loads the row for its
// caller but leaves such bytes in place (writer.drop), so two builds do
// not take turns deleting each other's values.
type foreignValue struct{ err error }

func (e foreignValue) Error() string {
	return "a value of another shape, written by another build of the same version? (" + e.err.Error() + ")"
}

func (e foreignValue) Unwrap() error { return e.err }

// isMap reports that b is one whole msgpack map, each length in it
// within b.
func isMap(b []byte) bool {
	if _, _, err := wire.ReadMapLen(b); err != nil {
		return false
	}
	rest, err := wire.Skip(b)
	return err == nil && len(rest) == 0
}
