package runtime

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		opts   []Option
		option string // the *ConfigError's Option; "" when valid
		msg    string // part of the message
	}{
		{"the defaults are valid", nil, "", ""},
		{"refresh 0 disables refresh", []Option{WithRefresh(0)}, "", ""},
		{"warm equal to hot is allowed", []Option{WithWarmQPS(3000)}, "", ""},
		{"warm above hot is rejected", []Option{WithWarmQPS(3001)}, "warm_qps", "above hot_qps"},
		{"top_n above local_size is rejected", []Option{WithTopN(300)}, "top_n", "exceeds local_size 200"},
		{"refresh equal to local_ttl is rejected", []Option{WithRefresh(time.Hour)}, "refresh", "shorter than local_ttl"},
		{"a zero window is rejected", []Option{WithWindow(0)}, "window", "positive duration"},
		{"a window too short for its slots is rejected", []Option{WithWindow(5 * time.Millisecond)}, "window", "at least 10ms"},
		{"a negative promote tick is rejected", []Option{WithPromoteEvery(-time.Second)}, "promote_every", "positive"},
		{"a zero demote tick is rejected", []Option{WithDemoteEvery(0)}, "demote_every", "positive"},
		{"a zero local_ttl is rejected", []Option{WithLocalTTL(0)}, "local_ttl", "positive"},
		{"a zero inactive_after is rejected", []Option{WithInactiveAfter(0)}, "inactive_after", "positive"},
		{"a negative ttl is rejected", []Option{WithTTL(-1)}, "ttl", "negative"},
		{"a sub-millisecond ttl is rejected", []Option{WithTTL(time.Microsecond)}, "ttl", "millisecond"},
		{"a negative refresh is rejected", []Option{WithRefresh(-time.Second)}, "refresh", "negative"},
		{"a zero hot_qps is rejected", []Option{WithHotQPS(0)}, "hot_qps", "positive"},
		{"a zero warm_qps is rejected", []Option{WithWarmQPS(0)}, "warm_qps", "positive"},
		{"a zero top_n is rejected", []Option{WithTopN(0)}, "top_n", "positive"},
		{"a zero local_size is rejected", []Option{WithLocalSize(0)}, "local_size", "positive"},
		{"zero refresh_failures is rejected", []Option{WithRefreshFailures(0)}, "refresh_failures", "positive"},
		{"a zero recorder_size is rejected", []Option{WithRecorderSize(0)}, "recorder_size", "positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(tt.opts...)
			err := cfg.Validate()
			if tt.option == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want a *ConfigError", err)
			}
			if ce.Option != tt.option || !strings.Contains(ce.Error(), tt.msg) {
				t.Fatalf("Validate() = %q (option %q), want option %q and a message with %q", ce, ce.Option, tt.option, tt.msg)
			}
		})
	}
}
