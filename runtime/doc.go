// Package runtime is the engine behind every repository hotkeygen
// generates. It reads and writes msgpack values in Redis, watches per-key
// traffic, serves the few hot keys from an in-process theine cache, keeps
// those local copies fresh, and reports stats. Generated code only supplies
// typed keys, values and a deep-copy function.
package runtime

// A map of the package, for whoever changes it. The typed facade:
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
//	keys.go         AppendKeyString, for generated key builders
//	options.go      every option, declared once; config.go, validate.go and
//	                changes_config.go derive Config, With… and the checks from it
//	stats.go        Stats and History; changes_stats.go and history.go their types
//	errors.go       the errors a caller matches, and the one classifier of
//	                "absent, or did Redis fail?"
//	clock.go        Clock, and the wall clock's
//
// Mechanisms that need no key or value type live in internal packages,
// each tested alone against a real redis-server:
//
//	internal/breaker  a node's breaker: verdicts, the probe, waiting callers, error classes
//	internal/layout   how a value sits in Redis: a String or a hash (read, read many, set, set if absent, delete)
//	internal/bloom    the Bloom filter in front of the loader, its bits in Redis
//	internal/changes  the change buffer: mark, claim, settle; its sync worker, which claims
//	                  changed ids, reloads their rows and writes them through the Cache
//	internal/track    the transport: one hub per client, shared by its repositories (sessions,
//	                  their PINGs, nodes and their coverage, a cluster's topology, node options)
//	internal/fresh    the copies, and the one protocol that decides whether one may be kept and
//	                  served (fresh.go); which keys are hot, the hot set (hot.go)
//	internal/detect   the recorder and the selector of hot keys
//	internal/send     how one read's commands travel: the client's automatic pipeline, or its pool
//	internal/reads    reads of bytes through their nodes' breakers: one key's, and a batch
//	                  per node (the refresh's, and GetMany's, given up when a copy's node opens)
//	internal/throttle spaced log lines: of one kind of failure, and of one key's big values
//	internal/lease    a load's lease on its key: the placeholder taken with SET NX GET, the row
//	                  written back only while it is there, the wait for another's
//	internal/sizehint the first capacity of an encoding's buffer, from the last sizes
//	internal/rates    the history of the counters' totals, as rates per second (History)
//	internal/group    goroutines a close waits for, and the user's code it does not
//	internal/operr    an operation's error: "hotkey: ", the operation and its key once
//	internal/background  when the tick's jobs are due, a job run once at a time, the ticker loop
//	../internal/option  the options' declaration: the table of rows, their typed With,
//	                  the record of those written, the rules of single values
//	../internal/aggregate  cluster-wide counts in Redis, the slots waiting to be
//	                  reported, and whether reporting fails
//	wire              the msgpack reader that checks every length before it allocates
//	livepage, prom    the live page and the Prometheus collector
