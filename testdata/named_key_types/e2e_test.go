package accounts

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go.

import "testing"

func TestAccountKey(t *testing.T) {
	if got := AccountKey("eu", 3, -42); got != "acct:eu:3:-42" {
		t.Fatalf(`AccountKey("eu", 3, -42) = %q, want "acct:eu:3:-42"`, got)
	}
}
