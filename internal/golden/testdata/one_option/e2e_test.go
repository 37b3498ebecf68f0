package cart

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e connects to it.

import (
	"context"
	"testing"

	"example.com/golden/e2e"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// Each repository constructs from its annotation alone, and with one
// runtime option alone, and reads back what it wrote.
func TestOneOptionIsEnough(t *testing.T) {
	rdb := e2e.ClientWithout(t, CartKey(1), PriceKey("a"), StockKey("a"))
	ctx := context.Background()

	carts := MustNewCartRepo(rdb)
	defer carts.Close()
	if err := carts.SetCart(ctx, &Cart{ID: 1, Items: []string{"pear"}}); err != nil {
		t.Fatal(err)
	}
	if c, err := carts.GetCart(ctx, 1); err != nil || c.Items[0] != "pear" {
		t.Fatalf("GetCart = %+v, %v", c, err)
	}

	prices := MustNewPriceRepo(rdb)
	defer prices.Close()
	if err := prices.SetPrice(ctx, &Price{SKU: "a", Cents: 250}); err != nil {
		t.Fatal(err)
	}
	if p, err := prices.GetPrice(ctx, "a"); err != nil || p.Cents != 250 {
		t.Fatalf("GetPrice = %+v, %v", p, err)
	}

	stock := MustNewStockRepo(rdb)
	defer stock.Close()
	if err := stock.SetStock(ctx, &Stock{SKU: "a", Count: 3}); err != nil {
		t.Fatal(err)
	}
	if s, err := stock.GetStock(ctx, "a"); err != nil || s.Count != 3 {
		t.Fatalf("GetStock = %+v, %v", s, err)
	}

	// One runtime option alone, as a caller tunes a repository.
	tuned := MustNewCartRepo(rdb, runtime.WithHotQPS(20))
	defer tuned.Close()
	if _, err := tuned.GetCart(ctx, 1); err != nil {
		t.Fatal(err)
	}
}
