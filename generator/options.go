package generator

import (
	"fmt"
	"reflect"

	"github.com/hotkeygen/hotkeygen/annotations"
	declared "github.com/hotkeygen/hotkeygen/internal/option"
)

// runtimeOption names the runtime.Option function an annotation option
// turns into, and reads the option's parsed value from the Spec.
type runtimeOption struct {
	Func  string
	Value func(*annotations.Spec) any // see option.Value
}

// runtimeOptions maps every annotation option that configures the cache
// to its runtime option: the rows of the runtime's declaration
// (runtime/internal/config/options.go) a directive may set. key, name and the other
// codeOptions shape the generated code instead. An option annotations
// accepts but this table lacks is an error at the option, never silently
// dropped.
var runtimeOptions = map[string]runtimeOption{}

// modeConsts names the runtime's constant for each value of a choice
// (degrade=, invalidate=), so the defaults read
// runtime.WithDegrade(runtime.DegradeLoader). A value two options share
// ("off") is written with the constant of the first declared.
var modeConsts = map[string]string{}

func init() {
	for _, r := range declared.Rows() {
		for _, w := range r.Choices {
			if _, ok := modeConsts[w.Text]; !ok {
				modeConsts[w.Text] = w.Const
			}
		}
		if !r.Directive {
			continue
		}
		runtimeOptions[r.Name] = runtimeOption{r.Func(), func(s *annotations.Spec) any {
			v := reflect.ValueOf(s.Config).FieldByName(r.Field).Interface()
			if r.Kind == declared.Choice {
				return modeConst(v.(string))
			}
			return v
		}}
	}
	for _, name := range annotations.OptionNames() {
		if _, ok := runtimeOptions[name]; !ok {
			codeOptions[name] = true
		}
	}
}

// runtimeConst is a constant of the runtime package, written by its name.
type runtimeConst string

// modeConst is the argument of WithDegrade or WithInvalidate for mode: the
// runtime's constant, or the string itself for a mode this table does not
// know (annotations rejects those, so it is only a fallback that still
// compiles).
func modeConst(mode string) any {
	if name, ok := modeConsts[mode]; ok {
		return runtimeConst(name)
	}
	return mode
}

// codeOptions shape the generated code rather than configure the cache:
// the options annotations accepts that the runtime does not declare.
var codeOptions = map[string]bool{}

// option is one runtime.Option call among a repository's defaults.
type option struct {
	Func string // "WithTTL"
	// Value is the argument: a time.Duration, float64, int, bool, string
	// or runtimeConst.
	Value any
}

// options lists the runtime options of spec's explicit arguments, in source
// order, after WithEntity. Durations, rates and counts come from the Spec,
// where annotations parsed them.
func options(entity string, spec *annotations.Spec) ([]option, ErrorList) {
	opts := []option{{Func: "WithEntity", Value: entity}}
	var errs ErrorList
	for _, a := range spec.Args {
		if codeOptions[a.Name] {
			continue
		}
		ro, ok := runtimeOptions[a.Name]
		if !ok {
			errs.Add(a.Pos, annotations.RuleInternalError, fmt.Sprintf("%s: this version of hotkeygen does not know which runtime option to emit for it; update the generator's option table", a.Name))
			continue
		}
		opts = append(opts, option{Func: ro.Func, Value: ro.Value(spec)})
	}
	return opts, errs
}
