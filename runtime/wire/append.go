package wire

import (
	"encoding/binary"
	"math"
	"time"
)

// The msgpack type codes this package writes or reads natively.
const (
	codeNil     = 0xc0
	codeFalse   = 0xc2
	codeTrue    = 0xc3
	codeBin8    = 0xc4
	codeBin16   = 0xc5
	codeBin32   = 0xc6
	codeExt8    = 0xc7
	codeExt16   = 0xc8
	codeExt32   = 0xc9
	codeFloat   = 0xca
	codeDouble  = 0xcb
	codeUint8   = 0xcc
	codeUint16  = 0xcd
	codeUint32  = 0xce
	codeUint64  = 0xcf
	codeInt8    = 0xd0
	codeInt16   = 0xd1
	codeInt32   = 0xd2
	codeInt64   = 0xd3
	codeFixExt4 = 0xd6
	codeFixExt8 = 0xd7
	codeStr8    = 0xd9
	codeStr16   = 0xda
	codeStr32   = 0xdb
	codeArray16 = 0xdc
	codeArray32 = 0xdd
	codeMap16   = 0xde
	codeMap32   = 0xdf

	fixMap   = 0x80
	fixArray = 0x90
	fixStr   = 0xa0
)

// timeExt is msgpack's timestamp extension type.
const timeExt = -1

// AppendNil appends nil, as msgpack writes a nil pointer, slice or map.
func AppendNil(b []byte) []byte { return append(b, codeNil) }

// AppendBool appends a bool.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, codeTrue)
	}
	return append(b, codeFalse)
}

// AppendMapLen appends the header of a map of n pairs.
func AppendMapLen(b []byte, n int) []byte { return appendLen(b, n, fixMap, codeMap16, codeMap32) }

// AppendArrayLen appends the header of an array of n elements.
func AppendArrayLen(b []byte, n int) []byte {
	return appendLen(b, n, fixArray, codeArray16, codeArray32)
}

func appendLen(b []byte, n int, fix, code16, code32 byte) []byte {
	switch {
	case n < 16:
		return append(b, fix|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, code16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, code32), uint32(n))
}

// AppendString appends s as a msgpack str.
func AppendString(b []byte, s string) []byte {
	if n := len(s); n < 32 {
		b = append(b, fixStr|byte(n))
	} else {
		b = appendSized(b, n, codeStr8, codeStr16, codeStr32)
	}
	return append(b, s...)
}

// AppendBytes appends p as msgpack bin; a nil p is written as nil.
func AppendBytes(b []byte, p []byte) []byte {
	if p == nil {
		return AppendNil(b)
	}
	return append(appendSized(b, len(p), codeBin8, codeBin16, codeBin32), p...)
}

// appendSized appends the header of a str or bin of n bytes in the
// smallest of its 8, 16 and 32-bit forms.
func appendSized(b []byte, n int, code8, code16, code32 byte) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, code8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, code16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, code32), uint32(n))
}

// AppendInt appends n in the fewest bytes, as msgpack writes int.
func AppendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return AppendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return AppendInt8(b, int8(n))
	case n >= math.MinInt16:
		return AppendInt16(b, int16(n))
	case n >= math.MinInt32:
		return AppendInt32(b, int32(n))
	}
	return AppendInt64(b, n)
}

// AppendUint appends n in the fewest bytes, as msgpack writes uint.
func AppendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return AppendUint8(b, uint8(n))
	case n <= math.MaxUint16:
		return AppendUint16(b, uint16(n))
	case n <= math.MaxUint32:
		return AppendUint32(b, uint32(n))
	}
	return AppendUint64(b, n)
}

// The fixed-width writers keep the Go type's width, as msgpack writes
// int8 to int64 and uint8 to uint64 fields.

func AppendInt8(b []byte, n int8) []byte   { return append(b, codeInt8, byte(n)) }
func AppendUint8(b []byte, n uint8) []byte { return append(b, codeUint8, n) }
func AppendInt16(b []byte, n int16) []byte {
	return binary.BigEndian.AppendUint16(append(b, codeInt16), uint16(n))
}
func AppendUint16(b []byte, n uint16) []byte {
	return binary.BigEndian.AppendUint16(append(b, codeUint16), n)
}
func AppendInt32(b []byte, n int32) []byte {
	return binary.BigEndian.AppendUint32(append(b, codeInt32), uint32(n))
}
func AppendUint32(b []byte, n uint32) []byte {
	return binary.BigEndian.AppendUint32(append(b, codeUint32), n)
}
func AppendInt64(b []byte, n int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, codeInt64), uint64(n))
}
func AppendUint64(b []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, codeUint64), n)
}

// AppendFloat32 appends f as a msgpack float 32.
func AppendFloat32(b []byte, f float32) []byte {
	return binary.BigEndian.AppendUint32(append(b, codeFloat), math.Float32bits(f))
}

// AppendFloat64 appends f as a msgpack float 64.
func AppendFloat64(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, codeDouble), math.Float64bits(f))
}

// AppendTime appends t as the msgpack timestamp extension, in the 4, 8 or
// 12 byte form msgpack picks.
func AppendTime(b []byte, t time.Time) []byte {
	secs := uint64(t.Unix())
	if secs>>34 == 0 {
		data := uint64(t.Nanosecond())<<34 | secs
		if data&0xffffffff00000000 == 0 {
			return binary.BigEndian.AppendUint32(append(b, codeFixExt4, byte(timeExt&0xff)), uint32(data))
		}
		return binary.BigEndian.AppendUint64(append(b, codeFixExt8, byte(timeExt&0xff)), data)
	}
	b = append(b, codeExt8, 12, byte(timeExt&0xff))
	b = binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
	return binary.BigEndian.AppendUint64(b, secs)
}
