package catalog

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e, a copy of
// internal/golden/testdata/e2e, connects to it.

import (
	"context"
	"testing"

	"example.com/golden/e2e"
)

// Batch reads return one value per key, in the keys' order, nil where a
// key is absent; without a loader nothing is loaded.
func TestBatchReadsAreAlignedWithTheirKeys(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)

	addrs := MustNewAddressRepo(rdb)
	defer addrs.Close()
	for _, a := range []*Address{{ID: 1, Street: "Elm"}, {ID: 3, Street: "Oak"}} {
		if err := addrs.SetAddress(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := addrs.GetAddresses(ctx, []int64{3, 2, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].Street != "Oak" || got[1] != nil || got[2].Street != "Elm" || got[3].Street != "Oak" {
		t.Fatalf("GetAddresses(3, 2, 1, 3) = %+v; want Oak, nil, Elm, Oak", got)
	}
	if got[0] == got[3] {
		t.Fatal("GetAddresses returned one value twice: each must be the caller's own")
	}
	if got, err := addrs.GetAddresses(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("GetAddresses(nil) = %v, %v; want nothing", got, err)
	}

	matches := MustNewMatchRepo(rdb)
	defer matches.Close()
	if err := matches.SetMatch(ctx, &Match{Day: "sat", Num: 2, Home: "Reds"}); err != nil {
		t.Fatal(err)
	}
	ms, err := matches.GetMatches(ctx, []MatchKey{{Day: "sat", Num: 1}, {Day: "sat", Num: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0] != nil || ms[1] == nil || ms[1].Home != "Reds" {
		t.Fatalf("GetMatches = %+v; want nil, then the Reds' match", ms)
	}

	news := MustNewNewsRepo(rdb)
	defer news.Close()
	if err := news.SetNews(ctx, &News{ID: 7, Headline: "Plurals"}); err != nil {
		t.Fatal(err)
	}
	ns, err := news.GetNewsList(ctx, []uint64{7, 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || ns[0] == nil || ns[0].Headline != "Plurals" || ns[1] != nil {
		t.Fatalf("GetNewsList(7, 8) = %+v; want the Plurals story, then nil", ns)
	}

	series := MustNewSeriesRepo(rdb)
	defer series.Close()
	if err := series.SetSeries(ctx, &seriesRow{Series: "tos", Episodes: 79}); err != nil {
		t.Fatal(err)
	}
	ss, err := series.GetSeriesList(ctx, []string{"tng", "tos"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0] != nil || ss[1] == nil || ss[1].Episodes != 79 {
		t.Fatalf("GetSeriesList(tng, tos) = %+v; want nil, then tos", ss)
	}
}
