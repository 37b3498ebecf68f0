// Package runtime is what every repository hotkeygen generates calls. It
// reads and writes msgpack values in Redis, watches per-key
// traffic, serves the few hot keys from an in-process theine cache, keeps
// those local copies fresh, and reports stats. Generated code only supplies
// typed keys, values and a deep-copy function.
package runtime

// A map of the package, for whoever changes it. The runtime is a facade:
// the names a repository calls, each a line over the engine beneath it.
//
//	cache.go        Glue, Cache: New, Get, View, GetMany, Set, Del, MarkChanged,
//	                WarmBloom, Stats, History, Close
//	collection.go   CollectionGlue, Collection: HGetAll, HGetAllMany, HGet, HSet, HDel
//	options.go      the With functions, each the With of its option's row
//	config.go       Config, Option, ConfigError, the modes and the defaults
//	errors.go       the errors a caller matches
//	stats.go        Stats and its parts, Sample
//	keys.go         AppendKeyString, for generated key builders
//
// Beneath it, internal packages, each tested alone:
//
//	internal/config   every setting: each option declared once (options.go), the
//	                  defaults that follow others, Validate, and Apply, which New calls
//	internal/engine   the Cache itself: the read path and the write path, loads, refresh,
//	                  the background tick, collections, the change buffer's glue, stats
//	                  (its doc.go maps it); the runtime's tests reach it through seams.go
//
// The engine's mechanisms need no key or value type:
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
//	otel              OpenTelemetry: the metrics and spans of a repository made with
//	                  its Instrument option (an engine.Observer)
