package names

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go.

import (
	"math"
	"testing"
)

func TestItemKey(t *testing.T) {
	got := ItemKey{Type: "t", Len: math.MinInt, R: math.MaxUint8, Ctx: "c", ID: -5, URL: "u"}.String()
	if want := "item:t:-9223372036854775808:255:c:-5:u:-5"; got != want {
		t.Fatalf("ItemKey{...}.String() = %q, want %q", got, want)
	}
}
