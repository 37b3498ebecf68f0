package option

import (
	"fmt"
	"reflect"
)

// Setting is one row of a Table of C's options: the Row the other
// packages read, and what only the declaring package needs, where in C
// the value sits and the rules it must keep.
type Setting[C any] struct {
	Row
	// bit is the setting's bit in a Written: its place in the table.
	bit uint
	// field is the index of Row.Field in C, for reflect.
	field []int
	// rules check the value alone; each returns "" when it holds, or
	// what is wrong.
	rules []func(any) string
	// written and invalid are the table's (see Table).
	written func(*C) *Written
	invalid func(option, msg string) error
}

// Any is an option of C whatever the type of its values: what a check
// relating several options takes.
type Any[C any] interface{ Self() *Setting[C] }

// Self lets a function take any Of[C, O, T] as its setting.
func (s *Setting[C]) Self() *Setting[C] { return s }

// Set sets the setting's field of c to v, of the field's type.
func (s *Setting[C]) Set(c *C, v any) {
	reflect.ValueOf(c).Elem().FieldByIndex(s.field).Set(reflect.ValueOf(v))
}

// Value returns the setting's field of c.
func (s *Setting[C]) Value(c *C) any {
	return reflect.ValueOf(c).Elem().FieldByIndex(s.field).Interface()
}

// Written reports whether an option set s in c.
func (s *Setting[C]) Written(c *C) bool { return s.written(c).has(s.bit) }

// Errorf reports the setting's value as invalid.
func (s *Setting[C]) Errorf(format string, args ...any) error {
	return s.invalid(s.Name, fmt.Sprintf(format, args...))
}

// Check returns the rules of s that c's value breaks.
func (s *Setting[C]) Check(c *C) []error {
	var errs []error
	v := s.Value(c)
	for _, rule := range s.rules {
		if msg := rule(v); msg != "" {
			errs = append(errs, s.invalid(s.Name, msg))
		}
	}
	return errs
}

// WrittenWhileOff reports each of opts that was written to c although the
// feature they tune is off (on false), where it would do nothing.
func WrittenWhileOff[C any](c *C, on bool, feature, turnOn string, opts ...Any[C]) []error {
	var errs []error
	for _, o := range opts {
		if s := o.Self(); !on && s.Written(c) {
			errs = append(errs, s.Errorf("applies only to %s, which is off; add %s, or remove %s", feature, turnOn, s.Name))
		}
	}
	return errs
}
