// Package catalog declares its types in a group; the directive sits on the
// type it is for.
package catalog

type (
	// SKU is a stock-keeping unit.
	SKU string

	// Product is something for sale.
	//
	//hotkey:cache key=product:{SKU} ttl=10m
	Product struct {
		SKU   SKU
		Title string
	}

	// Price is not cached.
	Price struct {
		SKU   SKU
		Cents int64
	}
)
