package annotations

import (
	"cmp"
	"fmt"
	"go/token"
	"slices"
	"strings"
)

// Error is one problem in a directive, positioned at the argument (or the
// template brace) that caused it so editors can jump straight to it, with
// the rule it breaks so that CI can tell problems apart without reading
// their wording.
type Error struct {
	Pos  token.Position
	Rule Rule
	Msg  string
}

// warningPrefix starts the message of every warning: a problem that does
// not stop generation, printed in the text format as it is.
const warningPrefix = "warning: "

// Warning reports whether the problem is a warning, which alone fails no
// run: its message starts with "warning: ".
func (e *Error) Warning() bool {
	return strings.HasPrefix(e.Msg, warningPrefix)
}

// Message is the message without its "warning: ", for formats that say
// the severity apart.
func (e *Error) Message() string {
	return strings.TrimPrefix(e.Msg, warningPrefix)
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

// Add appends a problem at pos that breaks rule.
func (l *ErrorList) Add(pos token.Position, rule Rule, msg string) {
	*l = append(*l, &Error{Pos: pos, Rule: rule, Msg: msg})
}

func (l *ErrorList) add(pos token.Position, rule Rule, format string, args ...any) {
	l.Add(pos, rule, fmt.Sprintf(format, args...))
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
			cmp.Compare(a.Rule, b.Rule),
		)
	})
	*l = slices.CompactFunc(*l, func(a, b *Error) bool { return *a == *b })
}
