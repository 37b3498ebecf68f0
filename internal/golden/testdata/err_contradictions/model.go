package model

// Only values written in the annotation can contradict each other; a
// default follows them. Every problem of a run is reported at once.

// Sizes refuses writes before ever warning about them.
//
//hotkey:cache key=sizes:{ID} max_value_bytes=64KiB max_value_bytes_hard=16KiB
type Sizes struct{ ID int64 }

// Cluster sets a cluster-wide rate with cluster-wide detection off.
//
//hotkey:cache key=cluster:{ID} cluster_hot_qps=9000
type Cluster struct{ ID int64 }

// Many has a typo, a misspelt field and two contradictions.
//
//hotkey:cache key=many:{Nmae} ttl=3x top_n=500 local_size=20 refresh=2h local_ttl=1h
type Many struct{ Name string }

// Fine tunes one threshold only, which is enough.
//
//hotkey:cache key=fine:{ID} hot_qps=100 local_size=5 local_ttl=5s max_value_bytes_hard=1KiB
type Fine struct{ ID int64 }
