package layout

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/redis/go-redis/v9"
)

// Field names of a collection's hash that hold no item. Item fields are
// key parts, escaped as the runtime's AppendKeyString escapes them, where
// '%' is always followed by two upper-case hex digits: a '%' and a
// lower-case letter can never name an item.
const (
	// nextField holds the earliest expiry of the hash's items, in Unix
	// milliseconds, or "-" when none has one: a write that finds it
	// still ahead knows no item has expired without looking at any
	// (see writeScript).
	nextField = "%next"
	// nullField marks an owner the loader reported absent, as Null does
	// for a String.
	nullField = "%null"
)

// hashBytes turns an HGETALL reply into the runtime's form: redis.Nil for
// a hash without items, Null for the placeholder of an absent owner.
func hashBytes(m map[string]string) ([]byte, error) {
	if _, ok := m[nullField]; ok {
		return Null, nil
	}
	fields := make([]string, 0, len(m))
	size := 0
	for f, v := range m {
		if reserved(f) {
			continue
		}
		fields = append(fields, f)
		size += len(f) + len(v) + 2*binary.MaxVarintLen32 + 1
	}
	if len(fields) == 0 {
		return nil, redis.Nil
	}
	slices.Sort(fields)
	b := make([]byte, 0, size)
	for _, f := range fields {
		b = AppendItem(b, f, 0, []byte(m[f]))
	}
	return b, nil
}

// reserved reports a field of a collection's hash that holds no item.
func reserved(field string) bool {
	return len(field) > 1 && field[0] == '%' && 'a' <= field[1] && field[1] <= 'z'
}

// AppendItem appends one item to b in the runtime's form of a
// collection, a sequence of items, each a uvarint length and the field
// name, a varint expiry in Unix milliseconds (0: none or unknown), a
// uvarint length and the item's msgpack. A collection's whole value,
// encoded for a loader's write-back, is its items appended one after
// another. Items read from Redis are sorted by field, so the same hash
// always gives the same bytes, whose hash the refresh compares; their
// expiry is only set on the way to Redis, where the write script records
// it.
func AppendItem(b []byte, field string, exp int64, value []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(field)))
	b = append(b, field...)
	b = binary.AppendVarint(b, exp)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}

// errForm reports bytes not in the runtime's form; they never come from
// Redis, which a Hash reads through hashBytes.
var errForm = errors.New("malformed collection bytes")

// ReadItems calls each for every item of b, in the runtime's form,
// checking every length against the bytes left: it never allocates from
// a length the bytes declare.
func ReadItems(b []byte, each func(field string, exp int64, value []byte) error) error {
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return errForm
		}
		field := string(b[w : w+int(n)])
		b = b[w+int(n):]
		exp, w := binary.Varint(b)
		if w <= 0 {
			return errForm
		}
		b = b[w:]
		n, w = binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return errForm
		}
		if err := each(field, exp, b[w:w+int(n)]); err != nil {
			return err
		}
		b = b[w+int(n):]
	}
	return nil
}
