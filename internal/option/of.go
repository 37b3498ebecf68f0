package option

// Of is a setting of C whose values are of type T, so that its With
// function is typed: the row variables of a Table are of this type.
type Of[C any, O ~func(*C), T any] struct{ *Setting[C] }

// With returns the option setting o to v, and recording it written: the
// public With function of o is a call of it.
func (o Of[C, O, T]) With(v T) O {
	return func(c *C) { o.Set(c, v); o.written(c).add(o.bit) }
}

// ProgramOnly marks an option a directive cannot set: it tunes the
// program rather than the entity.
func (o Of[C, O, T]) ProgramOnly() Of[C, O, T] {
	o.Directive = false
	return o
}
