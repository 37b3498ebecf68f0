package annotations

import "strings"

// Closest returns the candidate a misspelt name most likely meant, ignoring
// case, or "" when none is close enough for the suggestion to help rather
// than confuse. Ties go to the earlier candidate, so candidates must be in a
// stable order. The generator uses it for field names too.
func Closest(name string, candidates []string) string {
	name = strings.ToLower(name)
	best, bestDist := "", 3 // at most two edits
	for _, c := range candidates {
		if d := distance(name, strings.ToLower(c)); d < bestDist && 2*d < len(c) {
			best, bestDist = c, d
		}
	}
	return best
}

// distance is the optimal string alignment distance between a and b: the
// number of byte insertions, deletions, substitutions and adjacent swaps
// turning a into b. Swaps count once because "hot_qsp" is one slip of the
// fingers away from "hot_qps", not two.
func distance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
