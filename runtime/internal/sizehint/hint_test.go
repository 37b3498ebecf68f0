package sizehint

import "testing"

// The hint is room for the smaller of the last two sizes with a quarter
// to spare, and never under Min: one huge value among small ones does
// not move it, values that stay large do on the second.
func TestHintFollowsLastingSizes(t *testing.T) {
	var h Hint
	for _, tc := range []struct {
		name string
		saw  []int64
		want int64
	}{
		{"before any encoding", nil, Min},
		{"small values", []int64{12, 12, 12}, Min},
		{"one huge value after small ones", []int64{4 << 20}, Min},
		{"a small one after it", []int64{12}, Min},
		{"a large value", []int64{10_000}, Min},
		{"the same size again", []int64{10_000}, 12_500},
		{"a little larger", []int64{11_000}, 12_500},
		{"smaller again", []int64{800}, 1000},
	} {
		for _, n := range tc.saw {
			h.Saw(n)
		}
		if got := h.Cap(); got != tc.want {
			t.Fatalf("%s: Cap = %d, want %d", tc.name, got, tc.want)
		}
	}
}
