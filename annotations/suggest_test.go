package annotations

import "testing"

// Field names are suggested with the same helper, in any case.
func TestClosest(t *testing.T) {
	fields := []string{"ID", "Name", "Email"}
	tests := []struct{ in, want string }{
		{"Nmae", "Name"},   // a swap
		{"name", "Name"},   // case only
		{"Emial", "Email"}, // a swap
		{"Id", "ID"},       // case only, short
		{"Phone", ""},      // nothing close
		{"X", ""},          // too short to guess from
	}
	for _, tt := range tests {
		if got := Closest(tt.in, fields); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
