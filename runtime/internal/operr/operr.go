// Package operr is the error of one of the runtime's operations: the one
// error a caller gets that says "hotkey: " and what failed, however many
// layers the cause went through. It needs no key or value type, so the
// runtime's typed facade and the internal packages that read and write
// Redis for it make their errors alike, here.
package operr

import (
	"strconv"
	"unicode/utf8"
)

// Error is the error of an operation (Op) on a key, and on one of its
// fields for a collection's item; Key is empty for an operation on
// several. It says "hotkey: " and what failed once: `hotkey: hget
// "devtok:42" "phone": Redis unavailable at 10.0.0.7:6379 (…)`. The
// errors it wraps name neither.
type Error struct {
	Op, Key, Field string
	Err            error
}

func (e *Error) Error() string {
	s := "hotkey: " + e.Op
	if e.Key != "" {
		s += " " + strconv.Quote(Short(e.Key))
	}
	if e.Field != "" {
		s += " " + strconv.Quote(Short(e.Field))
	}
	return s + ": " + e.Err.Error()
}

// Shown is how many bytes of a key, or a field, an error or a log line
// quotes: a key is a caller's input, and a megabyte of it would be a
// megabyte of every line that names it.
const Shown = 256

// Short returns key as errors and logs quote it: whole up to Shown bytes,
// else its first Shown bytes (cut on a character's start) and its length.
func Short(key string) string {
	if len(key) <= Shown {
		return key
	}
	cut := Shown
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	return key[:cut] + "…(" + strconv.Itoa(len(key)) + " bytes)"
}

func (e *Error) Unwrap() error { return e.Err }

// Of returns err, the cause of op on key failing, as that operation's
// error, unless a layer below already made it one: an operation's
// prefix, and its key, appear once in an error, however many layers it
// went through.
func Of(op, key string, err error) error {
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Op: op, Key: key, Err: err}
}

// OfField is Of for an operation on field of key.
func OfField(op, key, field string, err error) error {
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Op: op, Key: key, Field: field, Err: err}
}

// Cause returns what err, an operation's error, says of why it failed,
// without its prefix: for an error that quotes another.
func Cause(err error) error {
	if oe, ok := err.(*Error); ok {
		return oe.Err
	}
	return err
}
