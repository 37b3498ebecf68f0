// Package catalog keeps Redis in step with a database: changed rows are
// marked and synced by a worker, and a Bloom filter turns reads of ids the
// database never had away before they reach it.
package catalog

// Article turns both on. The sync worker runs every 50ms here, so the
// end-to-end test sees it work; the buffer's expiry must outlive ten
// intervals and the lease.
//
//hotkey:cache key=changes:article:{ID} ttl=10m changes=on sync_every=50ms sync_batch=100
//hotkey:cache bloom=on bloom_items=10000 bloom_fp=1%
type Article struct {
	ID      int64
	Title   string
	Version int
}

// Price is keyed by two fields: its ids are key structs.
//
//hotkey:cache key=changes:price:{Shop}:{SKU} changes=on sync_every=50ms
type Price struct {
	Shop  string
	SKU   string
	Cents int64
}
