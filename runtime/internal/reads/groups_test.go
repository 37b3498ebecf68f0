package reads

import (
	"slices"
	"strconv"
	"testing"

	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
	"github.com/hotkeygen/hotkeygen/runtime/internal/track"
)

func TestGroups(t *testing.T) {
	keys := make([]string, 1200)
	for i := range keys {
		keys[i] = "k:" + strconv.Itoa(i)
	}
	single := Groups(keys, false, layout.MGetChunk)
	if len(single) != 3 || len(single[0]) != 500 || len(single[1]) != 500 || len(single[2]) != 200 {
		t.Fatalf("one server: groups of %v, want 500, 500, 200", groupSizes(single))
	}
	tagged := make([]string, 1200)
	for i := range tagged {
		tagged[i] = "{t}:" + strconv.Itoa(i)
	}
	keys = append(keys, tagged...)
	seen := make([]bool, len(keys))
	for _, g := range Groups(keys, true, layout.MGetChunk) {
		if len(g) > layout.MGetChunk {
			t.Fatalf("a cluster MGET of %d keys", len(g))
		}
		for _, i := range g {
			if track.HashSlot(keys[i]) != track.HashSlot(keys[g[0]]) {
				t.Fatalf("one MGET spans slots: %q and %q", keys[g[0]], keys[i])
			}
			if seen[i] {
				t.Fatalf("%q read twice", keys[i])
			}
			seen[i] = true
		}
	}
	if slices.Contains(seen, false) {
		t.Fatal("a key was left out")
	}
}

func groupSizes(groups [][]int) []int {
	var n []int
	for _, g := range groups {
		n = append(n, len(g))
	}
	return n
}
