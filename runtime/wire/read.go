package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// errShort reports input that ends inside a value.
var errShort = fmt.Errorf("msgpack: %w", io.ErrUnexpectedEOF)

// need returns an error unless b holds n bytes.
func need(b []byte, n int) error {
	if len(b) < n {
		return errShort
	}
	return nil
}

// ReadNil consumes a nil at the start of b, reporting whether there was
// one: a pointer, slice or map field is set to nil when it is.
func ReadNil(b []byte) ([]byte, bool) {
	if len(b) > 0 && b[0] == codeNil {
		return b[1:], true
	}
	return b, false
}

// ReadMapLen reads a map header: the number of pairs, or -1 for nil. A
// length the rest of the input cannot hold is an error, so a corrupt
// header cannot make the caller allocate.
func ReadMapLen(b []byte) (int, []byte, error) {
	n, b, err := readLen(b, fixMap, 0x8f, codeMap16, codeMap32)
	if err == nil && n > len(b)/2 {
		return 0, b, errShort
	}
	return n, b, err
}

// ReadArrayLen reads an array header: the number of elements, or -1 for
// nil, checked against the rest of the input as ReadMapLen does.
func ReadArrayLen(b []byte) (int, []byte, error) {
	n, b, err := readLen(b, fixArray, 0x9f, codeArray16, codeArray32)
	if err == nil && n > len(b) {
		return 0, b, errShort
	}
	return n, b, err
}

// errArrayStruct is msgpack's refusal of a struct written as an array of
// another number of fields.
var errArrayStruct = errors.New("msgpack: number of fields in array-encoded struct has changed")

// ReadStructLen reads the header of a struct of fields fields. A struct is
// a map of its fields, n pairs keyed by name; or, as msgpack's reflection
// also reads it, an array of exactly fields values in the order of the
// struct's fields (what msgpack writes with UseArrayEncodedStructs or the
// as_array tag option), and then asArray is set. n is -1 when the struct
// is to be zeroed: for nil and for an empty array.
func ReadStructLen(b []byte, fields int) (n int, asArray bool, rest []byte, err error) {
	if len(b) == 0 || !isArray(b[0]) {
		n, b, err = ReadMapLen(b)
		return n, false, b, err
	}
	n, b, err = ReadArrayLen(b)
	switch {
	case err != nil:
		return 0, false, b, err
	case n == 0:
		return -1, false, b, nil
	case n != fields:
		return 0, false, b, errArrayStruct
	}
	return n, true, b, nil
}

// isArray reports the type code of an array.
func isArray(c byte) bool { return c >= fixArray && c <= 0x9f || c == codeArray16 || c == codeArray32 }

func readLen(b []byte, fixLow, fixHigh, code16, code32 byte) (int, []byte, error) {
	if err := need(b, 1); err != nil {
		return 0, b, err
	}
	switch c := b[0]; {
	case c >= fixLow && c <= fixHigh:
		return int(c - fixLow), b[1:], nil
	case c == codeNil:
		return -1, b[1:], nil
	case c == code16:
		if err := need(b, 3); err != nil {
			return 0, b, err
		}
		return int(binary.BigEndian.Uint16(b[1:])), b[3:], nil
	case c == code32:
		if err := need(b, 5); err != nil {
			return 0, b, err
		}
		return int(binary.BigEndian.Uint32(b[1:])), b[5:], nil
	default:
		return 0, b, fmt.Errorf("msgpack: invalid code=%x decoding a map or array length", c)
	}
}

// ReadStringBytes reads a str or bin, or nil as empty, and returns its
// bytes without copying them: they alias b. Generated decoders match map
// keys with it.
func ReadStringBytes(b []byte) ([]byte, []byte, error) {
	if err := need(b, 1); err != nil {
		return nil, b, err
	}
	var n, h int
	switch c := b[0]; {
	case c >= fixStr && c <= 0xbf:
		n, h = int(c-fixStr), 1
	case c == codeNil:
		return nil, b[1:], nil
	case c == codeStr8 || c == codeBin8:
		n, h = lenAt(b, 1), 2
	case c == codeStr16 || c == codeBin16:
		n, h = lenAt(b, 2), 3
	case c == codeStr32 || c == codeBin32:
		n, h = lenAt(b, 4), 5
	default:
		return nil, b, fmt.Errorf("msgpack: invalid code=%x decoding string/bytes length", c)
	}
	if err := need(b, h+n); err != nil { // a short header reads as n = 0
		return nil, b, err
	}
	return b[h : h+n : h+n], b[h+n:], nil
}

// ReadString reads a string (a str or bin; nil reads as "").
func ReadString(b []byte) (string, []byte, error) {
	p, b, err := ReadStringBytes(b)
	return string(p), b, err
}

// ReadBytes reads a bin (or str) into a new slice; nil reads as nil.
func ReadBytes(b []byte) ([]byte, []byte, error) {
	if rest, ok := ReadNil(b); ok {
		return nil, rest, nil
	}
	p, b, err := ReadStringBytes(b)
	if err != nil {
		return nil, b, err
	}
	return append(make([]byte, 0, len(p)), p...), b, nil
}

// ReadBool reads a bool; nil reads as false.
func ReadBool(b []byte) (bool, []byte, error) {
	if len(b) > 0 {
		switch b[0] {
		case codeTrue:
			return true, b[1:], nil
		case codeFalse, codeNil:
			return false, b[1:], nil
		}
	}
	var v bool
	b, err := ReadValue(b, &v)
	return v, b, err
}

// ReadInt64 reads any msgpack integer (nil reads as 0), converted as
// msgpack converts it for a signed field.
func ReadInt64(b []byte) (int64, []byte, error) {
	u, b, err := readInteger(b)
	if err != nil {
		var v int64
		b, err = ReadValue(b, &v)
		return v, b, err
	}
	return int64(u), b, nil
}

// ReadUint64 reads any msgpack integer (nil reads as 0), converted as
// msgpack converts it for an unsigned field.
func ReadUint64(b []byte) (uint64, []byte, error) {
	u, b, err := readInteger(b)
	if err != nil {
		var v uint64
		b, err = ReadValue(b, &v)
		return v, b, err
	}
	return u, b, nil
}

// errNotNative sends a value to ReadValue: it is valid msgpack this
// package leaves to msgpack itself.
var errNotNative = fmt.Errorf("wire: not a native encoding")

// readInteger reads the integer encodings: signed ones sign-extended, so
// a conversion to int64 gives the value and to uint64 what msgpack gives.
func readInteger(b []byte) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, b, errNotNative
	}
	c := b[0]
	if c <= 0x7f || c >= 0xe0 {
		return uint64(int64(int8(c))), b[1:], nil
	}
	var size int
	switch c {
	case codeNil:
		return 0, b[1:], nil
	case codeUint8, codeInt8:
		size = 1
	case codeUint16, codeInt16:
		size = 2
	case codeUint32, codeInt32:
		size = 4
	case codeUint64, codeInt64:
		size = 8
	default:
		return 0, b, errNotNative
	}
	if len(b) < 1+size {
		return 0, b, errNotNative // ReadValue reports the truncation
	}
	p := b[1 : 1+size]
	var u uint64
	switch c {
	case codeUint8:
		u = uint64(p[0])
	case codeInt8:
		u = uint64(int64(int8(p[0])))
	case codeUint16:
		u = uint64(binary.BigEndian.Uint16(p))
	case codeInt16:
		u = uint64(int64(int16(binary.BigEndian.Uint16(p))))
	case codeUint32:
		u = uint64(binary.BigEndian.Uint32(p))
	case codeInt32:
		u = uint64(int64(int32(binary.BigEndian.Uint32(p))))
	default:
		u = binary.BigEndian.Uint64(p)
	}
	return u, b[1+size:], nil
}

// ReadFloat64 reads a float 64 or float 32; integers are read as msgpack
// reads them.
func ReadFloat64(b []byte) (float64, []byte, error) {
	if len(b) >= 9 && b[0] == codeDouble {
		return math.Float64frombits(binary.BigEndian.Uint64(b[1:])), b[9:], nil
	}
	if len(b) >= 5 && b[0] == codeFloat {
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b[1:]))), b[5:], nil
	}
	var v float64
	b, err := ReadValue(b, &v)
	return v, b, err
}

// ReadFloat32 reads a float 32; other numbers are read as msgpack reads
// them.
func ReadFloat32(b []byte) (float32, []byte, error) {
	if len(b) >= 5 && b[0] == codeFloat {
		return math.Float32frombits(binary.BigEndian.Uint32(b[1:])), b[5:], nil
	}
	var v float32
	b, err := ReadValue(b, &v)
	return v, b, err
}

// ReadTime reads the msgpack timestamp extension, as msgpack does: in the
// local time zone, except the zero time, in UTC.
func ReadTime(b []byte) (time.Time, []byte, error) {
	var sec, nsec int64
	switch {
	case len(b) >= 6 && b[0] == codeFixExt4 && int8(b[1]) == timeExt:
		sec, b = int64(binary.BigEndian.Uint32(b[2:])), b[6:]
	case len(b) >= 10 && b[0] == codeFixExt8 && int8(b[1]) == timeExt:
		d := binary.BigEndian.Uint64(b[2:])
		sec, nsec, b = int64(d&0x3ffffffff), int64(d>>34), b[10:]
	case len(b) >= 15 && b[0] == codeExt8 && b[1] == 12 && int8(b[2]) == timeExt:
		nsec, sec, b = int64(binary.BigEndian.Uint32(b[3:])), int64(binary.BigEndian.Uint64(b[7:])), b[15:]
	default:
		var t time.Time
		b, err := ReadValue(b, &t)
		return t, b, err
	}
	t := time.Unix(sec, nsec)
	if t.IsZero() {
		t = t.UTC()
	}
	return t, b, nil
}

// AppendValue appends v as msgpack's reflection writes it.
func AppendValue(b []byte, v any) ([]byte, error) {
	p, err := msgpack.Marshal(v)
	return append(b, p...), err
}

// lenAt returns the big-endian length of width bytes that follows the
// type code at b[0], or 0 when b ends first (the caller's check of the
// header's size then fails).
func lenAt(b []byte, width int) int {
	if len(b) < 1+width {
		return 0
	}
	switch width {
	case 1:
		return int(b[1])
	case 2:
		return int(binary.BigEndian.Uint16(b[1:]))
	}
	return int(binary.BigEndian.Uint32(b[1:]))
}
