package golden

import "testing"

func TestDiff(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{{
		name: "equal texts have no diff",
		want: "a\nb\n", got: "a\nb\n",
		diff: "",
	}, {
		name: "a changed line shows as removed then added, with context",
		want: "a\nb\nc\n", got: "a\nB\nc\n",
		diff: "@@ want line 1, got line 1 @@\n  a\n- b\n+ B\n  c\n",
	}, {
		name: "an added line at the end",
		want: "a\n", got: "a\nb\n",
		diff: "@@ want line 1, got line 1 @@\n  a\n+ b\n",
	}, {
		name: "unchanged runs far from a change are elided",
		want: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", got: "1\n2\n3\n4\n5\n6\n7\n8\nnine\n",
		diff: "@@ want line 6, got line 6 @@\n  6\n  7\n  8\n- 9\n+ nine\n",
	}, {
		name: "a missing final newline is visible",
		want: "a\n", got: "a",
		diff: "@@ want line 1, got line 1 @@\n- a\n+ a (no newline at end)\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff(tt.want, tt.got); got != tt.diff {
				t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", tt.want, tt.got, got, tt.diff)
			}
		})
	}
}
