// Package config sets every option of the annotation, across several
// lines, in an order the generated defaults follow.
package config

// Setting is a configuration entry.
//
//hotkey:cache key=setting:{Name} ttl=0 hot_qps=2500.5 warm_qps=100 top_n=20
//hotkey:cache window=20s promote_every=1500ms demote_every=90s local_size=400 local_ttl=2h
//hotkey:cache refresh=1m refresh_failures=5 recorder_size=5000 inactive_after=10m30s
//hotkey:cache null_ttl=90s jitter=10% rebuild_lock=on degrade=loader stale_reads=off
//hotkey:cache max_value_bytes=10KiB max_value_bytes_hard=1MiB invalidate=pubsub aggregate=on cluster_hot_qps=12000
//hotkey:cache changes=on sync_every=5s sync_batch=200 sync_lease=2m sync_ttl=12h
//hotkey:cache bloom=on bloom_items=50000 bloom_fp=0.5%
type Setting struct {
	Name  string
	Value string
}
