package engine

import (
	"context"
	"testing"
)

// RedisErrors counts a failed command the breaker's classifier counts
// (breaker.RedisError, whose tests hold the rules), and only those.
func TestRedisErrorsCountWhatTheClassifierCounts(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		counts bool
	}{
		{"a cancelled call's context.Canceled", cancelled, context.Canceled, false},
		{"a context.Canceled not the caller's, whose context is live", context.Background(), context.Canceled, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := new(Cache[string, int])
			if got := c.count.redisError(tc.ctx, tc.err); got != tc.counts {
				t.Errorf("redisError = %v, want %v", got, tc.counts)
			}
			if want := map[bool]uint64{false: 0, true: 1}[tc.counts]; c.count.redisErrors.Load() != want {
				t.Errorf("RedisErrors = %d, want %d", c.count.redisErrors.Load(), want)
			}
		})
	}
}
