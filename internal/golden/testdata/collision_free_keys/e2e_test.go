package members

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e, a copy of
// internal/golden/testdata/e2e, connects to it.

import (
	"context"
	"slices"
	"testing"

	"example.com/golden/e2e"
)

// Without escaping, Org "a:b" with User "c" and Org "a" with User "b:c"
// would both be stored under acct:a:b:c, and each write would overwrite
// the other member.
func TestSeparatorsInValuesDoNotMergeKeys(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)
	repo := MustNewMemberRepo(rdb)
	defer repo.Close()

	first := &Member{Org: "a:b", User: "c", Role: "owner"}
	second := &Member{Org: "a", User: "b:c", Role: "guest"}
	for _, m := range []*Member{first, second} {
		if err := repo.SetMember(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := rdb.Keys(ctx, "acct:a*").Result()
	slices.Sort(keys)
	if want := []string{"acct:a%3Ab:c", "acct:a:b%3Ac"}; err != nil || !slices.Equal(keys, want) {
		t.Fatalf("KEYS acct:a* = %q, %v; want %q", keys, err, want)
	}
	for _, m := range []*Member{first, second} {
		got, err := repo.GetMember(ctx, m.Org, m.User)
		if err != nil {
			t.Fatalf("GetMember(%q, %q): %v", m.Org, m.User, err)
		}
		if *got != *m {
			t.Fatalf("GetMember(%q, %q) = %+v, want %+v", m.Org, m.User, *got, *m)
		}
	}
	both, err := repo.GetMembers(ctx, []MemberKey{{Org: "a", User: "b:c"}, {Org: "a:b", User: "c"}})
	if err != nil || len(both) != 2 || both[0] == nil || both[1] == nil || both[0].Role != "guest" || both[1].Role != "owner" {
		t.Fatalf("GetMembers = %+v, %v; want the guest, then the owner", both, err)
	}
}

func TestKeysStayReadable(t *testing.T) {
	tests := []struct{ got, want string }{
		// Strings without a special byte are written as they are.
		{MemberKey{Org: "acme", User: "ada"}.String(), "acct:acme:ada"},
		{MemberKey{Org: "a b", User: "ada@example.com"}.String(), "acct:a b:ada@example.com"},
		// The escape byte itself is escaped, so the escaping is reversible.
		{MemberKey{Org: "100%", User: "x"}.String(), "acct:100%25:x"},
		{MemberKey{Org: "a%3Ab", User: "c"}.String(), "acct:a%253Ab:c"},
		// Each template escapes the bytes of its own literal text.
		{HandleKey("a/b"), "user/a%2Fb"},
		{HandleKey("a:b"), "user/a:b"},
		{PageKey{Name: "docs/intro", Rev: -3}.String(), "page/docs%2Fintro/rev--3"},
		{PageKey{Name: "x-y", Rev: 2}.String(), "page/x%2Dy/rev-2"},
		{HandleKey(""), "user/"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("key = %q, want %q", tt.got, tt.want)
		}
	}
}
