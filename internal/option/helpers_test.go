package option

import (
	"fmt"
	"time"
)

// config is a configuration for the tests, as runtime.Config is the
// runtime's: a field per option and the record of those written.
type config struct {
	Wait    time.Duration
	Rate    float64
	Share   float64
	N       int
	Bytes   int
	On      bool
	Mode    string
	written Written
}

// set is config's option, as runtime.Option is Config's.
type set func(*config)

// invalid is the error of an option whose value breaks a rule.
type invalid struct{ option, msg string }

func (e *invalid) Error() string { return fmt.Sprintf("invalid %s: %s", e.option, e.msg) }

// newTable returns an empty table of config's options.
func newTable() *Table[config, set] {
	return NewTable[config, set](
		func(c *config) *Written { return &c.written },
		func(option, msg string) error { return &invalid{option, msg} },
	)
}

// messages returns the messages of errs, each an *invalid.
func messages(errs []error) []string {
	var out []string
	for _, err := range errs {
		e := err.(*invalid)
		out = append(out, e.option+": "+e.msg)
	}
	return out
}
