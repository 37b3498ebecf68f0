//go:build hotkeygen_bench

package runtime

// WithEveryReadPiped sends every read of one command on the client's
// automatic pipeline, never on the pool's lane: the load table's
// reference "hotkeygen (pipeline)", beside which the lane is measured
// in the same run. It exists only in builds with the hotkeygen_bench
// tag, as bench/loadbench's, and is not part of the API.
func WithEveryReadPiped() Option { return func(c *Config) { c.Test.Piped = true } }
