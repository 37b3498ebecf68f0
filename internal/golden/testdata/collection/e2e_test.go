package model

// This test runs in the module internal/golden builds from this case,
// against the redis-server whose address is in REDIS_ADDR (see
// single_entity/e2e_test.go).

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"example.com/golden/e2e"
	"github.com/hotkeygen/hotkeygen/runtime"
)

func TestTokenRepo(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.ClientWithout(t, "token:42:ios", "token:42:web", "token:7:ios")
	repo := MustNewTokenRepo(rdb, runtime.WithHotQPS(1), runtime.WithWarmQPS(1))
	defer repo.Close()

	if got := (TokenKey{UserID: 42, Platform: "ios"}).String(); got != "token:42:ios" {
		t.Fatalf("TokenKey = %q", got)
	}
	if got := TokenField("a:b%"); got != "a%3Ab%25" {
		t.Fatalf(`TokenField("a:b%%") = %q, want the field escaped as a key part`, got)
	}
	now := time.Now()
	day, week := now.Add(24*time.Hour).Truncate(time.Millisecond), now.Add(7*24*time.Hour).Truncate(time.Millisecond)
	if err := repo.HSetToken(ctx, &Token{UserID: 42, Platform: "ios", Token: "t1", Status: 1, ExpiresAt: day}); err != nil {
		t.Fatal(err)
	}
	if err := repo.HSetTokens(ctx, []*Token{
		{UserID: 42, Platform: "ios", Token: "t2", ExpiresAt: week},
		{UserID: 42, Platform: "web", Token: "w1", ExpiresAt: day},
		{UserID: 42, Platform: "ios", Token: "gone", ExpiresAt: now.Add(-time.Second)},
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.PExpireTime(ctx, "token:42:ios").Result(); err != nil || got != time.Duration(week.UnixMilli())*time.Millisecond {
		t.Fatalf("PEXPIRETIME token:42:ios = %v, %v; want the latest item's expiry", got, err)
	}

	m, err := repo.HGetAllTokens(ctx, 42, "ios")
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, []string{"t1", "t2"}) {
		t.Fatalf("HGetAllTokens = %q; want t1 and t2, and not the expired item", got)
	}
	if v, err := repo.HGetToken(ctx, 42, "ios", "t1"); err != nil || v.Status != 1 || !v.ExpiresAt.Equal(day) {
		t.Fatalf("HGetToken t1 = %+v, %v", v, err)
	}
	if _, err := repo.HGetToken(ctx, 42, "ios", "gone"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("HGetToken of an expired item: %v, want ErrNotFound", err)
	}
	many, err := repo.HGetAllTokensMany(ctx, []TokenKey{{42, "ios"}, {7, "ios"}, {42, "web"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(many) != 3 || len(many[0]) != 2 || len(many[1]) != 0 || many[2]["w1"] == nil {
		t.Fatalf("HGetAllTokensMany = %v", many)
	}

	// Hot (hot_qps=1): read until served from memory; every caller gets
	// its own copy.
	for start := time.Now(); time.Since(start) < e2e.Patience && repo.Stats().Hits < 3; {
		m, err := repo.HGetAllTokens(ctx, 42, "ios")
		if err != nil || len(m) != 2 || m["t1"].Status != 1 {
			t.Fatalf("hot read = %v, %v: an earlier caller's change leaked", m, err)
		}
		m["t1"].Status = 99
		delete(m, "t2")
	}
	if repo.Stats().Hits < 3 {
		t.Fatal("the collection was never served from memory")
	}

	if err := repo.HDelToken(ctx, 42, "ios", "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.HGetToken(ctx, 42, "ios", "t1"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("HGetToken after HDelToken: %v, want ErrNotFound", err)
	}
	// "Log out everywhere" on a platform is one DEL.
	if err := repo.DelTokens(ctx, 42, "ios"); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, "token:42:ios").Val(); n != 0 {
		t.Fatal("DelTokens left the hash")
	}
	if m, err := repo.HGetAllTokens(ctx, 42, "ios"); err != nil || len(m) != 0 {
		t.Fatalf("HGetAllTokens after DelTokens = %v, %v", m, err)
	}
}

func TestLineRepo(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.ClientWithout(t, "cart:c1", "cart:c2")
	loads := 0
	repo := MustNewLineRepo(rdb, runtime.WithJitter(0), WithLinesLoader(func(_ context.Context, cartID string) (map[uint32]*Line, error) {
		loads++
		if cartID != "c2" {
			return nil, runtime.ErrNotFound
		}
		return map[uint32]*Line{7: {CartID: "c2", SKU: 7, Qty: 3}}, nil
	}))
	defer repo.Close()

	if err := repo.HSetLine(ctx, &Line{CartID: "c1", SKU: 1001, Qty: 2}); err != nil {
		t.Fatal(err)
	}
	if fields := rdb.HKeys(ctx, "cart:c1").Val(); !slices.Equal(fields, []string{"1001"}) {
		t.Fatalf("fields of cart:c1 = %q: want the SKU alone, without an expiry index", fields)
	}
	// Without expires=, the hash lives ttl=24h after a write.
	if ttl := rdb.PTTL(ctx, "cart:c1").Val(); ttl < 23*time.Hour || ttl > 24*time.Hour {
		t.Fatalf("PTTL cart:c1 = %v, want about 24h", ttl)
	}
	// A write renews a TTL that would cut the new line short...
	rdb.PExpire(ctx, "cart:c1", time.Minute)
	if err := repo.HSetLine(ctx, &Line{CartID: "c1", SKU: 1002, Qty: 1}); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "cart:c1").Val(); ttl < 23*time.Hour {
		t.Fatalf("PTTL after a write near the end = %v, want about 24h again", ttl)
	}
	// ...and leaves a longer one alone.
	rdb.PExpire(ctx, "cart:c1", 48*time.Hour)
	if err := repo.HSetLine(ctx, &Line{CartID: "c1", SKU: 1003, Qty: 1}); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "cart:c1").Val(); ttl < 47*time.Hour {
		t.Fatalf("PTTL after a write under a longer TTL = %v, want it kept at about 48h", ttl)
	}
	if v, err := repo.HGetLine(ctx, "c1", 1002); err != nil || v.Qty != 1 {
		t.Fatalf("HGetLine = %+v, %v", v, err)
	}

	// The loader returns a whole cart, written back as its hash.
	m, err := repo.HGetAllLines(ctx, "c2")
	if err != nil || len(m) != 1 || m[7].Qty != 3 {
		t.Fatalf("HGetAllLines through the loader = %v, %v", m, err)
	}
	if v := rdb.HGet(ctx, "cart:c2", "7").Val(); v == "" {
		t.Fatal("the loaded cart was not written back")
	}
	// An absent cart is remembered: one load for two reads.
	before := loads
	for range 2 {
		if m, err := repo.HGetAllLines(ctx, "c9"); err != nil || len(m) != 0 {
			t.Fatalf("an absent cart reads as %v, %v", m, err)
		}
	}
	if loads-before != 1 {
		t.Fatalf("two reads of an absent cart loaded %d times, want 1", loads-before)
	}
}

func TestSessionRepo(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.ClientWithout(t, "session:1")
	repo := MustNewSessionRepo(rdb)
	defer repo.Close()
	now := time.Now()
	if err := repo.HSetSessions(ctx, []*Session{
		{UserID: 1, Device: "old", Until: now.Add(300 * time.Millisecond)},
		{UserID: 1, Device: "keep", Until: now.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	// Once old has expired, a write deletes it, finding its expiry under
	// the tag's name in the generated codec's bytes; a server that expires
	// hash fields itself (Redis 8.0) has deleted it by then.
	for time.Now().Before(now.Add(350 * time.Millisecond)) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := repo.HGetSession(ctx, 1, "old"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("HGetSession of an expired session: %v, want ErrNotFound", err)
	}
	if err := repo.HSetSession(ctx, &Session{UserID: 1, Device: "new", Until: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	fields := rdb.HKeys(ctx, "session:1").Val()
	fields = slices.DeleteFunc(fields, func(f string) bool { return f == "%next" }) // the write script's index, where it runs
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"keep", "new"}) {
		t.Fatalf("fields after a write = %q; want the expired session gone", fields)
	}
}

// TestNilItemsAreErrors: every write of items refuses a nil one with an
// error, before it reads the item's key fields, and writes none of the
// batch it was in.
func TestNilItemsAreErrors(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.ClientWithout(t, "token:9:ios", "cart:nil")
	tokens, lines := MustNewTokenRepo(rdb), MustNewLineRepo(rdb)
	defer tokens.Close()
	defer lines.Close()
	token := &Token{UserID: 9, Platform: "ios", Token: "t", ExpiresAt: time.Now().Add(time.Hour)}

	tests := []struct {
		name  string
		write func() error
	}{
		{"HSetToken(nil)", func() error { return tokens.HSetToken(ctx, nil) }},
		{"HSetTokens with a nil item after a valid one", func() error { return tokens.HSetTokens(ctx, []*Token{token, nil}) }},
		{"HSetLine(nil)", func() error { return lines.HSetLine(ctx, nil) }},
		{"HSetLines with a nil item after a valid one", func() error { return lines.HSetLines(ctx, []*Line{{CartID: "nil", SKU: 1}, nil}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(); err == nil || !strings.HasPrefix(err.Error(), "hotkey: ") || !strings.Contains(err.Error(), "nil") {
				t.Fatalf("%s = %v, want an error saying an item is nil", tt.name, err)
			}
		})
	}
	if n := rdb.Exists(ctx, "token:9:ios", "cart:nil").Val(); n != 0 {
		t.Fatalf("%d of the batches with a nil item were written, want none", n)
	}
}
