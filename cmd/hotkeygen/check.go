package main

import (
	"fmt"
	"go/token"
	"io"
	"os"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/hotkeygen/hotkeygen/annotations"
	"github.com/hotkeygen/hotkeygen/generator"
)

// maxDiffLines bounds the diff -check prints per file: enough to see
// what changed, short enough that a regenerated file does not scroll a
// CI log away.
const maxDiffLines = 40

// The commands that bring the disk in line with what hotkeygen generates.
// go generate runs hotkeygen only where a //go:generate line asks for it,
// and that line usually went with the last annotation: only hotkeygen
// itself removes a superfluous file.
const (
	regenerate    = "run go generate ./..."
	regenerateAll = "run go tool hotkeygen ./... (go generate cannot remove a file whose package no longer asks for hotkeygen)"
)

// reportChanges writes what -check found, as sqlc diff does: each file
// with how it differs and, for a stale one, a unified diff from the disk
// to what would be generated; then the command that brings the disk in
// line.
func reportChanges(w io.Writer, res *generator.Result, changes []generator.Change) {
	superfluous := false
	for _, c := range changes {
		rel := res.Rel(c.Path)
		switch c.Kind {
		case generator.Stale:
			fmt.Fprintf(w, "%s: stale\n", rel)
			old, err := os.ReadFile(c.Path)
			if err != nil {
				fmt.Fprintf(w, "  (cannot read it: %v)\n", err)
				continue
			}
			writeDiff(w, udiff.Unified(rel+" (on disk)", rel+" (generated)", string(old), string(res.Files[c.Path])))
		case generator.Missing:
			fmt.Fprintf(w, "%s: missing (%d lines would be generated)\n", rel, strings.Count(string(res.Files[c.Path]), "\n"))
		case generator.Superfluous:
			superfluous = true
			fmt.Fprintf(w, "%s: superfluous (its package has no //hotkey:cache annotation left)\n", rel)
		default:
			fmt.Fprintf(w, "%s: %s\n", rel, c.Kind)
		}
	}
	if superfluous {
		fmt.Fprintln(w, "hotkeygen: generated code is out of date; "+regenerateAll)
		return
	}
	fmt.Fprintln(w, "hotkeygen: generated code is out of date; "+regenerate)
}

// changeFindings are what -check found as findings, for the formats other
// than text: each file, the rule its state breaks and the command that
// mends it. They carry no diff: the text format shows one.
func changeFindings(res *generator.Result, changes []generator.Change) annotations.ErrorList {
	var list annotations.ErrorList
	for _, c := range changes {
		at := token.Position{Filename: res.Rel(c.Path)}
		switch c.Kind {
		case generator.Stale:
			list.Add(at, annotations.RuleStaleFile, "stale: it differs from what hotkeygen generates now; "+regenerate)
		case generator.Missing:
			list.Add(at, annotations.RuleMissingFile, "missing: its package has //hotkey:cache annotations; "+regenerate)
		case generator.Superfluous:
			list.Add(at, annotations.RuleSuperfluousFile, "superfluous: its package has no //hotkey:cache annotation left; "+regenerateAll)
		default:
			list.Add(at, annotations.RuleInternalError, fmt.Sprintf("%s, which this hotkeygen does not know how to report; report it", c.Kind))
		}
	}
	return list
}

// writeDiff writes diff indented, cut at maxDiffLines.
func writeDiff(w io.Writer, diff string) {
	lines := strings.SplitAfter(strings.TrimSuffix(diff, "\n"), "\n")
	for i, l := range lines {
		if i == maxDiffLines {
			fmt.Fprintf(w, "  … %d more lines of diff\n", len(lines)-i)
			return
		}
		fmt.Fprint(w, "  "+strings.TrimSuffix(l, "\n")+"\n")
	}
}
