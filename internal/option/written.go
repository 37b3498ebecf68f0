package option

// maxOptions is how many options a Table may hold: a bit each in Written.
const maxOptions = 64

// Written is the set of a configuration's options that an option set,
// each by its place in the Table. A configuration keeps one, so that a
// default which depends on another setting follows the value the caller
// chose, and a contradiction blames only values someone wrote.
type Written uint64

func (w *Written) add(bit uint)     { *w |= 1 << bit }
func (w Written) has(bit uint) bool { return w&(1<<bit) != 0 }
