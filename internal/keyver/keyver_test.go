package keyver

import (
	"slices"
	"strings"
	"testing"
)

func TestEachVersionHasKeysOfItsOwnAndKnowsItsNeighbours(t *testing.T) {
	for _, tc := range []struct {
		lit     string
		version int
		key     string // under Prefix(lit, version)
		want    []string
	}{
		{lit: "user:", version: 1, key: "user:7", want: []string{"user:v2:7"}},
		{lit: "user:", version: 2, key: "user:v2:7", want: []string{"user:7", "user:v3:7"}},
		{lit: "user:", version: 3, key: "user:v3:7", want: []string{"user:v2:7", "user:v4:7"}},
		{lit: "order-", version: 2, key: "order-v2-a:9", want: []string{"order-a:9", "order-v3-a:9"}},
		{lit: "user:", version: 2, key: "other:7"}, // not the entity's
		{lit: "", version: 2, key: "7"},            // no literal: one keyspace
	} {
		prefix := Prefix(tc.lit, tc.version)
		got := Neighbours(prefix, tc.version, tc.key)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Neighbours(%q, %d, %q) = %q, want %q", prefix, tc.version, tc.key, got, tc.want)
		}
		if tc.want == nil {
			continue
		}
		for i, p := range NeighbourPrefixes(prefix, tc.version) {
			if i >= len(got) || !strings.HasPrefix(got[i], p) {
				t.Errorf("NeighbourPrefixes(%q, %d)[%d] = %q, not the prefix of %q", prefix, tc.version, i, p, got)
			}
		}
	}
}
