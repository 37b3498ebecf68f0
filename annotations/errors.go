package annotations

import (
	"cmp"
	"fmt"
	"go/token"
	"slices"
	"strings"
)

// Error is one problem in a directive, positioned at the argument (or the
// template brace) that caused it so editors can jump straight to it.
type Error struct {
	Pos token.Position
	Msg string
}

// Error prints "file:line:col: message", or only the message when the
// problem has no position (a package pattern that matched nothing, say).
func (e *Error) Error() string {
	if e.Pos.Filename == "" && !e.Pos.IsValid() {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// ErrorList holds every problem found in a doc comment, sorted by position,
// so one run of the generator shows the user everything to fix. The
// generator collects its own problems in the same type.
type ErrorList []*Error

// Error prints one problem per line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find the first *Error of the list.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Add appends a problem at pos.
func (l *ErrorList) Add(pos token.Position, msg string) {
	*l = append(*l, &Error{Pos: pos, Msg: msg})
}

func (l *ErrorList) add(pos token.Position, format string, args ...any) {
	l.Add(pos, fmt.Sprintf(format, args...))
}

// Sort orders the list by file, line and column, then message, and drops
// exact repeats, so output is deterministic however the problems were found.
func (l *ErrorList) Sort() {
	slices.SortFunc(*l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
	*l = slices.CompactFunc(*l, func(a, b *Error) bool { return *a == *b })
}
