package runtime

import "github.com/vmihailenco/msgpack/v5"

// KeyBuf holds one map key while a generated DecodeMsgpack matches it
// against the entity's field names, so keys are not allocated one by one.
// No field name is longer: a longer key names no field.
type KeyBuf [64]byte

// DecodeMsgpackKey reads a map key written as a msgpack string (or binary)
// into buf and returns it, valid until the next call. A key longer than
// buf, or nil, is consumed and returned empty, which matches no field, so
// the caller skips its value; corrupt lengths cannot make it allocate.
func DecodeMsgpackKey(dec *msgpack.Decoder, buf *KeyBuf) ([]byte, error) {
	n, err := dec.DecodeBytesLen()
	if err != nil || n <= 0 {
		return nil, err
	}
	if n <= len(buf) {
		return buf[:n], dec.ReadFull(buf[:n])
	}
	for n > 0 {
		chunk := min(n, len(buf))
		if err := dec.ReadFull(buf[:chunk]); err != nil {
			return nil, err
		}
		n -= chunk
	}
	return nil, nil
}
