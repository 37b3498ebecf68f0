package main

import (
	"fmt"
	"io"

	"github.com/hotkeygen/hotkeygen/annotations"
	"github.com/hotkeygen/hotkeygen/generator"
	"github.com/hotkeygen/hotkeygen/internal/findings"
)

// reporter prints a run's findings in the format -format chose. The text
// format prints them as they come, on stderr, as hotkeygen always has,
// and -check's files with their diffs. The others hold them to the end of
// the run and print them on stdout, where CI reads them: one document
// (json), or nothing but workflow commands (github), even when the run
// fails before it generates anything.
type reporter struct {
	format         findings.Format
	stdout, stderr io.Writer
	held           annotations.ErrorList
}

// add reports the findings of list.
func (r *reporter) add(list annotations.ErrorList) {
	if r.format == findings.Text {
		findings.Write(r.stderr, findings.Text, list)
		return
	}
	r.held = append(r.held, list...)
}

// changes reports what -check found out of date.
func (r *reporter) changes(res *generator.Result, changes []generator.Change) {
	if r.format == findings.Text {
		reportChanges(r.stderr, res, changes)
		return
	}
	r.add(changeFindings(res, changes))
}

// fail reports err, which stopped the run, and ends it: the findings of
// an ErrorList, or else one finding of the whole run (no package matched
// the patterns, a file could not be written), so that CI sees that too.
func (r *reporter) fail(err error) int {
	list, ok := err.(annotations.ErrorList)
	if !ok {
		list = annotations.ErrorList{{Rule: annotations.RuleRunFailed, Msg: err.Error()}}
	}
	r.add(list)
	return r.end(exitFindings)
}

// end prints what the format holds to the end and returns status, the
// run's exit status.
func (r *reporter) end(status int) int {
	if r.format == findings.Text {
		return status
	}
	if err := findings.Write(r.stdout, r.format, r.held); err != nil {
		fmt.Fprintf(r.stderr, "hotkeygen: %v\n", err)
		return exitFindings
	}
	return status
}
