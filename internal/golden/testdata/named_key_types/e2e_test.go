package accounts

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go.

import "testing"

func TestAccountKey(t *testing.T) {
	if got := (AccountKey{Region: "eu", Shard: 3, ID: -42}).String(); got != "acct:eu:3:-42" {
		t.Fatalf(`AccountKey{Region: "eu", Shard: 3, ID: -42}.String() = %q, want "acct:eu:3:-42"`, got)
	}
}
