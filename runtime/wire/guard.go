package wire

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxDepth is how deeply arrays and maps may nest in a value read from
// outside the program. msgpack's reflection recurses once per level, so a
// few megabytes of nested arrays would otherwise overflow the goroutine's
// stack, a fatal error no recover catches; no value a program writes on
// purpose comes near 512 levels.
const MaxDepth = 512

// ErrTooDeep reports a value whose containers nest deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("msgpack: arrays and maps nested deeper than %d levels", MaxDepth)

// Skip returns what follows the value at the start of b. It is the check
// every value read from outside passes before anything is allocated for
// it: each length a header declares must fit in what remains of b, and
// containers may nest at most MaxDepth deep. It allocates nothing unless
// the value nests deeper than 16 levels, and then at most 4 KiB.
func Skip(b []byte) ([]byte, error) {
	// open holds, for each container being read, how many of its items
	// are still to come, innermost last; todo is the innermost's count.
	var stack [16]int
	open, todo := stack[:0], 1
	// pending is the total of every count still open: each pending item
	// needs a byte of what follows, so a corrupt count fails at once.
	pending := 1
	for {
		for todo == 0 {
			if len(open) == 0 {
				return b, nil
			}
			todo, open = open[len(open)-1], open[:len(open)-1]
		}
		if len(b) == 0 {
			return b, errShort
		}
		c := b[0]
		var head, body int // bytes of header and of payload
		items := -1        // a container's items, keys and values both counted
		switch {
		case c <= 0x7f || c >= 0xe0, c == codeNil, c == codeFalse, c == codeTrue:
			head = 1
		case c >= fixMap && c <= 0x8f:
			head, items = 1, 2*int(c-fixMap)
		case c >= fixArray && c <= 0x9f:
			head, items = 1, int(c-fixArray)
		case c >= fixStr && c <= 0xbf:
			head, body = 1, int(c-fixStr)
		case c == codeBin8 || c == codeStr8:
			head, body = 2, lenAt(b, 1)
		case c == codeBin16 || c == codeStr16:
			head, body = 3, lenAt(b, 2)
		case c == codeBin32 || c == codeStr32:
			head, body = 5, lenAt(b, 4)
		case c == codeExt8: // the length, then the type byte
			head, body = 3, lenAt(b, 1)
		case c == codeExt16:
			head, body = 4, lenAt(b, 2)
		case c == codeExt32:
			head, body = 6, lenAt(b, 4)
		case c == codeFloat || c == codeUint32 || c == codeInt32:
			head = 5
		case c == codeDouble || c == codeUint64 || c == codeInt64:
			head = 9
		case c == codeUint8 || c == codeInt8:
			head = 2
		case c == codeUint16 || c == codeInt16:
			head = 3
		case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
			head = 2 + 1<<(c-0xd4)
		case c == codeArray16:
			head, items = 3, lenAt(b, 2)
		case c == codeArray32:
			head, items = 5, lenAt(b, 4)
		case c == codeMap16:
			head, items = 3, 2*lenAt(b, 2)
		case c == codeMap32:
			head, items = 5, 2*lenAt(b, 4)
		default:
			return b, fmt.Errorf("msgpack: invalid code=%x", c)
		}
		todo--
		pending--
		if items >= 0 {
			if len(open) == MaxDepth {
				return b, ErrTooDeep
			}
			pending += items
		}
		if len(b) < head+body || pending > len(b)-head-body {
			return b, errShort
		}
		b = b[head+body:]
		if items > 0 {
			open, todo = append(open, todo), items
		}
	}
}

// Unmarshal is msgpack.Unmarshal for bytes from outside the program, such
// as a value read from Redis. Skip checks the value first, so msgpack
// allocates only for what b holds (it would otherwise grow a buffer
// toward whatever length a corrupt header declares) and never recurses
// more than MaxDepth deep; and a panic inside msgpack (a map keyed by an
// array, for a map[any]any) is returned as an error.
func Unmarshal(b []byte, v any) error {
	if _, err := Skip(b); err != nil {
		return err
	}
	return unmarshalChecked(b, v)
}

// ReadValue decodes the value at the start of b into v with msgpack's
// reflection, for the types and encodings this package leaves to it,
// checked as Unmarshal checks it.
func ReadValue(b []byte, v any) ([]byte, error) {
	rest, err := Skip(b)
	if err != nil {
		return b, err
	}
	if err := unmarshalChecked(b[:len(b)-len(rest)], v); err != nil {
		return b, err
	}
	return rest, nil
}

// unmarshalChecked is msgpack.Unmarshal of a value Skip has accepted.
func unmarshalChecked(b []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack: %v", r)
		}
	}()
	return msgpack.Unmarshal(b, v)
}
