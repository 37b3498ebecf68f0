// Package option is the runtime's declaration of its options, as the
// annotations and generator packages read it, and the machinery that
// declares them.
//
// runtime/internal/config/options.go declares every option once: its name, Config field,
// default, kind and rules. The annotations' table, the generator's option
// calls and docs/options.md's option table (by a test) are derived from it. The
// declaration itself stays unexported, so the runtime's public API does
// not grow; the runtime publishes a read-only copy here, where the other
// packages of this module, and only they, can read it.
//
// The declaration is a Table (table.go) of Settings (setting.go), each
// row a typed Of (of.go) whose With is the runtime's With function; a
// configuration records the options written to it in a Written
// (written.go), and rules.go holds the rules of single values the rows
// share. None of it names runtime.Config, so it lives here, beside the
// Rows it publishes, and is tested alone.
package option

import "slices"

// Kind says what an option holds and how a directive writes it.
type Kind uint8

const (
	Duration Kind = iota + 1 // a time.Duration, written 30s
	Rate                     // a float64 of reads per second, written 3000
	Fraction                 // a float64 fraction, written 0.05 or 5%
	Count                    // an int, written 10
	Size                     // an int of bytes, written 16384 or 16KiB
	Toggle                   // a bool, written on or off
	Choice                   // a string, one of the option's Choices
)

// Word is one value a Choice option accepts.
type Word struct {
	Text  string // as written: "loader"
	Const string // the runtime's constant holding it: "DegradeLoader"
}

// Row is one option as the runtime declares it.
type Row struct {
	// Name is the option's name in directives and in runtime.ConfigError:
	// "hot_qps".
	Name string
	// Field is the runtime.Config field the option sets: "HotQPS". Its
	// runtime.Option is "With"+Field.
	Field string
	Kind  Kind
	// Choices are the values of a Choice option.
	Choices []Word
	// Directive says whether a //hotkey:cache directive may set the
	// option; the others (monitor_every, ...) belong to the program.
	Directive bool
	// Default is the field's value in runtime.DefaultConfig, of the
	// field's type.
	Default any
	// With is the option's runtime.Option constructor, a func(T)
	// runtime.Option with T the field's type: the function "With"+Field
	// is.
	With any
}

// Func is the name of the row's runtime.Option constructor: "WithHotQPS".
func (r Row) Func() string { return "With" + r.Field }

// Words lists the values a Choice option accepts.
func (r Row) Words() []string {
	words := make([]string, len(r.Choices))
	for i, c := range r.Choices {
		words[i] = c.Text
	}
	return words
}

var published []Row

// Publish is called once, by the runtime's initialization, with its
// declaration.
func Publish(rows []Row) { published = slices.Clone(rows) }

// Rows returns the runtime's options in their order of declaration. Every
// package that reads them imports the runtime too, which published them
// when it was initialized, before its importers.
func Rows() []Row {
	if published == nil {
		panic("option: read before the runtime published its options; import github.com/hotkeygen/hotkeygen/runtime")
	}
	return slices.Clone(published)
}
