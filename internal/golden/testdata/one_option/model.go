// Package cart tunes one option of each entity and nothing else: the
// defaults that depend on it follow it, so each builds and runs.
package cart

// Cart sets only hot_qps, below the default warm_qps.
//
//hotkey:cache key=cart:{ID} hot_qps=100
type Cart struct {
	ID    int64
	Items []string
}

// Price sets only local_ttl, shorter than the default refresh.
//
//hotkey:cache key=price:{SKU} local_ttl=5s
type Price struct {
	SKU   string
	Cents int64
}

// Stock sets only local_size, below the default top_n.
//
//hotkey:cache key=stock:{SKU} local_size=5
type Stock struct {
	SKU   string
	Count int
}
