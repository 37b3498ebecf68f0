package golden

import (
	"fmt"
	"strings"
)

// context is the number of unchanged lines shown around a change.
const context = 3

// Diff returns a line diff turning want into got, "-" for lines only in
// want and "+" for lines only in got, with a little context; empty when
// they are equal. It is meant for test failures, not patches: the
// longest-common-subsequence table is quadratic in the number of lines.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	a, b := lines(want), lines(got)
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type edit struct {
		op   byte // ' ', '-' or '+'
		line string
	}
	var edits []edit
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			edits = append(edits, edit{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			edits = append(edits, edit{'-', a[i]})
			i++
		default:
			edits = append(edits, edit{'+', b[j]})
			j++
		}
	}
	// Show changes with their context; elide long unchanged runs.
	show := make([]bool, len(edits))
	for k, e := range edits {
		if e.op != ' ' {
			for c := max(0, k-context); c <= min(len(edits)-1, k+context); c++ {
				show[c] = true
			}
		}
	}
	var sb strings.Builder
	wantLine, gotLine := 1, 1
	skipped := false
	for k, e := range edits {
		if !show[k] {
			skipped = true
		} else {
			if skipped || k == 0 {
				fmt.Fprintf(&sb, "@@ want line %d, got line %d @@\n", wantLine, gotLine)
				skipped = false
			}
			fmt.Fprintf(&sb, "%c %s\n", e.op, e.line)
		}
		if e.op != '+' {
			wantLine++
		}
		if e.op != '-' {
			gotLine++
		}
	}
	return sb.String()
}

// lines splits s into lines; a missing final newline shows as a line of
// its own so that it is visible in the diff.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	for i, l := range ls {
		if strings.HasSuffix(l, "\n") {
			ls[i] = l[:len(l)-1]
		} else {
			ls[i] = l + " (no newline at end)"
		}
	}
	return ls
}
