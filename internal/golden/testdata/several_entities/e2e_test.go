package store

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go.

import "testing"

func TestKeys(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{UserKey(1), "user:1"},
		{ShopKey(18446744073709551615), "shop:18446744073709551615"},
		{SessionKey("tok"), "session:tok"},
	} {
		if tt.got != tt.want {
			t.Errorf("key = %q, want %q", tt.got, tt.want)
		}
	}
	// One clone function serves Address for both entities.
	u := &User{Address: &Address{Lines: []string{"a"}}}
	cloneUser(u).Address.Lines[0] = "x"
	s := &Shop{Address: Address{Lines: []string{"a"}}}
	cloneShop(s).Address.Lines[0] = "x"
	if u.Address.Lines[0] != "a" || s.Address.Lines[0] != "a" {
		t.Fatal("changing a clone changed the original")
	}
}
