// Package wire reads and writes msgpack directly on byte slices, for the
// codecs hotkeygen generates. It writes exactly the bytes
// github.com/vmihailenco/msgpack/v5 writes with its default options, and
// reads what that package reads: the common encodings of each type are
// decoded here, without an io.Reader, a pooled Decoder or reflection; any
// other encoding of a value is handed to msgpack's reflection, so a value
// msgpack accepts is never refused (unless nested deeper than MaxDepth)
// and one it refuses is refused with its error.
//
// Input is not trusted: every reader checks a declared length against the
// bytes left before it allocates, and reflection is only handed values
// Skip has accepted (see Unmarshal), nested at most MaxDepth deep.
//
// Readers take the input and return what follows the value they read, as
// tinylib/msgp does: a whole entity is decoded by threading one slice
// through its fields, which costs no allocation but the values' own.
package wire
