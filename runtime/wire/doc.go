// Package wire reads and writes msgpack directly on byte slices, for the
// codecs hotkeygen generates. It writes exactly the bytes
// github.com/vmihailenco/msgpack/v5 writes with its default options, and
// reads what that package reads: the common encodings of each type are
// decoded here, without an io.Reader, a pooled Decoder or reflection; any
// other encoding of a value is handed to msgpack.Unmarshal, so a value
// msgpack accepts is never refused and one it refuses is refused with its
// error.
//
// Readers take the input and return what follows the value they read, as
// tinylib/msgp does: a whole entity is decoded by threading one slice
// through its fields, which costs no allocation but the values' own.
package wire
