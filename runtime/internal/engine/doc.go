// Package engine is the Cache behind the runtime's facade: the typed
// read and write paths over the mechanisms of runtime/internal, built
// from a resolved config.Config. The runtime re-exports its types and
// errors; its exported methods beyond the facade's are the seams of the
// runtime's tests (seams.go).
package engine

// A map of the package, for whoever changes it:
//
//	cache.go        Cache: New, Get and View (the read path, traced top to bottom),
//	                failed (every read's decision after Redis failed), Set, Del, Close
//	write.go        the one path of every write: Set, Del, sync, HSet/HDel, write-backs
//	getmany.go      GetMany: a batch of Gets, one round trip per node
//	load.go         loads: a cold read, one load per key for concurrent misses
//	                (singleflight), the loaders behind a miss, the rebuild lock, degrade
//	flight.go       a load in flight, and the count of loads landed
//	decode.go       the decodes of what a Cache reads through its layout
//	refresh.go      reloads of hot copies: the backstop, and revalidation after a session starts
//	aggregate.go    cluster-wide detection (aggregate=on): the keys behind the reported names
//	background.go   what the one ticking goroutine does, and the jobs it starts
//	collection.go   Collection: a value kept as a Redis hash, read and written by item
//	collection_write.go  the write script's runs for a Collection's owners
//	changes.go      MarkChanged, onto the change buffer; WarmBloom, the Bloom filter's
//	                typed glue; both made by setupChanges
//	bigvalue.go     max_value_bytes: the size limits of a value
//	encode.go       codec: values to msgpack and back, where Redis bytes are checked
//	stats.go        Stats and History; changes_stats.go and history.go their types
//	observe.go      each read's Outcome, and the Observer told of reads and loads
//	                (runtime/otel's)
//	errors.go       the sentinel errors, and the one classifier of
//	                "absent, or did Redis fail?"
//	seams.go        what the runtime's tests reach of a Cache
