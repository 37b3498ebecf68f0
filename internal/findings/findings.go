// Package findings prints what hotkeygen found (the errors and warnings of
// the directive parser and the generator, and the files -check finds out
// of date) in the formats of hotkeygen -format: text for people, json for
// tools, github for the annotations GitHub Actions shows on a pull
// request. It is apart from the command so that the golden tests print
// findings as the command does (docs/findings.md describes the formats).
package findings

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// Format is how findings are printed.
type Format string

const (
	// Text is one finding a line, "file:line:col: message", as the Go
	// tools print theirs; hotkeygen prints it on stderr.
	Text Format = "text"
	// JSON is one document, {"findings": [...]}, for tools.
	JSON Format = "json"
	// GitHub is one workflow command a finding, "::error file=…::message",
	// which GitHub Actions shows as an annotation at the line.
	GitHub Format = "github"
)

// Formats are the formats, the default first.
var Formats = []Format{Text, JSON, GitHub}

// ParseFormat returns the format named s, or an error that lists them.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	last := len(names) - 1
	return "", fmt.Errorf("unknown format %q; use %s or %s", s, strings.Join(names[:last], ", "), names[last])
}

// Finding is one finding as the JSON format writes it. File, Line and
// Column are left out when unknown: a finding of the whole run has no
// file, one of a whole file (-check's) no line.
type Finding struct {
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"` // "error" or "warning"
	Rule     string `json:"rule"`
	Message  string `json:"message"` // without the text format's "warning: "
}

// Document is what the JSON format writes: every finding of a run, in
// the order the text format prints them, and an empty list when there is
// none, so that a tool reads one shape whatever happened.
type Document struct {
	Findings []Finding `json:"findings"`
}

// Of converts an Error to its Finding.
func Of(e *annotations.Error) Finding {
	severity := "error"
	if e.Warning() {
		severity = "warning"
	}
	return Finding{
		File:     e.Pos.Filename,
		Line:     e.Pos.Line,
		Column:   e.Pos.Column,
		Severity: severity,
		Rule:     string(e.Rule),
		Message:  e.Message(),
	}
}

// Write prints list in format f to w: in the text and github formats one
// finding a line, nothing for none; in the json format one document.
func Write(w io.Writer, f Format, list annotations.ErrorList) error {
	var b strings.Builder
	switch f {
	case Text:
		for _, e := range list {
			b.WriteString(e.Error() + "\n")
		}
	case JSON:
		doc := Document{Findings: []Finding{}}
		for _, e := range list {
			doc.Findings = append(doc.Findings, Of(e))
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // messages quote Go code: <, > and & read as written
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	case GitHub:
		for _, e := range list {
			b.WriteString(command(Of(e)) + "\n")
		}
	default:
		return fmt.Errorf("findings: format %q", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// command is the GitHub Actions workflow command of one finding:
// "::error file=F,line=L,col=C,title=RULE::message", each property only
// when known.
func command(f Finding) string {
	var props []string
	if f.File != "" {
		props = append(props, "file="+escapeProperty(f.File))
	}
	if f.Line > 0 {
		props = append(props, "line="+strconv.Itoa(f.Line))
	}
	if f.Column > 0 {
		props = append(props, "col="+strconv.Itoa(f.Column))
	}
	props = append(props, "title="+escapeProperty(f.Rule))
	return "::" + f.Severity + " " + strings.Join(props, ",") + "::" + escapeData(f.Message)
}

// escapeData escapes a workflow command's message as the runner unescapes
// it (actions/toolkit's escapeData): a line break would end the command.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a property's value (actions/toolkit's
// escapeProperty): ',' would start the next property and ':' end them.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
