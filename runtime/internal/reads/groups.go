package reads

import "github.com/hotkeygen/hotkeygen/runtime/internal/track"

// Groups splits the indexes of keys into the commands of a batch read,
// each of at most per keys: chunks in order, or, on a cluster, chunks of
// the keys of each hash slot.
func Groups(keys []string, cluster bool, per int) [][]int {
	var groups [][]int
	if !cluster {
		for start := 0; start < len(keys); start += per {
			idx := make([]int, 0, min(per, len(keys)-start))
			for i := start; i < min(start+per, len(keys)); i++ {
				idx = append(idx, i)
			}
			groups = append(groups, idx)
		}
		return groups
	}
	bySlot := map[int]int{} // slot → its open group
	for i, k := range keys {
		s := track.HashSlot(k)
		g, ok := bySlot[s]
		if !ok || len(groups[g]) == per {
			g = len(groups)
			groups = append(groups, nil)
			bySlot[s] = g
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}
