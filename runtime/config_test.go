package runtime

import (
	"errors"

	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
		{"hot_qps alone takes warm_qps down with it", []Option{WithHotQPS(100)}, "", ""},
		{"warm_qps alone above the default hot_qps takes hot_qps up", []Option{WithWarmQPS(3001)}, "", ""},
		{"warm above a written hot is rejected", []Option{WithHotQPS(100), WithWarmQPS(101)}, "warm_qps", "above hot_qps"},
		{"local_size alone takes top_n down with it", []Option{WithLocalSize(5)}, "", ""},
		{"top_n alone above the default local_size takes local_size up", []Option{WithTopN(300)}, "", ""},
		{"top_n above a written local_size is rejected", []Option{WithLocalSize(5), WithTopN(6)}, "top_n", "exceeds local_size 5"},
		{"a short local_ttl alone shortens refresh", []Option{WithLocalTTL(time.Second)}, "", ""},
		{"a long refresh alone lengthens local_ttl", []Option{WithRefresh(2 * time.Hour)}, "", ""},
		{"refresh equal to a written local_ttl is rejected", []Option{WithLocalTTL(time.Minute), WithRefresh(time.Minute)}, "refresh", "shorter than local_ttl"},
		{"max_value_bytes_hard alone below the warning size takes it down", []Option{WithMaxValueBytesHard(100)}, "", ""},
		{"max_value_bytes_hard below a written max_value_bytes is rejected", []Option{WithMaxValueBytes(200), WithMaxValueBytesHard(100)}, "max_value_bytes_hard", "below max_value_bytes 200"},
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
		{"the change buffer's defaults are valid", []Option{WithChanges(true)}, "", ""},
		{"sync_every must be shorter than the lease", []Option{WithChanges(true), WithSyncEvery(time.Minute)}, "sync_lease", "longer than sync_every"},
		{"the lease must be shorter than the buffer's expiry", []Option{WithChanges(true), WithSyncTTL(time.Minute)}, "sync_ttl", "longer than sync_lease"},
		{"the buffer's expiry must outlive ten intervals", []Option{WithChanges(true), WithSyncEvery(20 * time.Second), WithSyncLease(30 * time.Second), WithSyncTTL(150 * time.Second)}, "sync_ttl", "10 × sync_every"},
		{"a zero sync_batch is rejected", []Option{WithChanges(true), WithSyncBatch(0)}, "sync_batch", "positive"},
		{"a sync option without the buffer is rejected", []Option{WithSyncBatch(10)}, "sync_batch", "add changes=on"},
		{"the Bloom filter's defaults are valid", []Option{WithBloom(true)}, "", ""},
		{"a bloom_fp of 1 is rejected", []Option{WithBloom(true), WithBloomFP(1)}, "bloom_fp", "between 0 and 1"},
		{"a Bloom filter above 4 GiB is rejected", []Option{WithBloom(true), WithBloomItems(1 << 40)}, "bloom_items", "MiB of Redis memory"},
		{"a bloom option without the filter is rejected", []Option{WithBloomItems(10)}, "bloom_items", "add bloom=on"},
		{"an empty entity name is rejected", []Option{WithEntity("")}, "entity", "empty name"},
		{"a nil loader is rejected", []Option{WithLoader[string, profile](nil)}, "loader", "nil function"},
		{"a nil batch loader is rejected", []Option{WithBatchLoader[string, profile](nil)}, "batch loader", "nil function"},
		{"a nil sync hook is rejected", []Option{WithSyncHook[string, profile](nil)}, "sync hook", "nil function"},
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

// A default that depends on another setting follows the value written for
// it, and never overrides a value someone wrote.
func TestConfigDefaultsFollowWrittenSettings(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want func(Config) bool
	}{
		{"warm_qps follows hot_qps", []Option{WithHotQPS(600)}, func(c Config) bool { return c.WarmQPS == 100 }},
		{"a written warm_qps stays", []Option{WithHotQPS(600), WithWarmQPS(300)}, func(c Config) bool { return c.WarmQPS == 300 }},
		{"hot_qps follows a warm_qps above it", []Option{WithWarmQPS(5000)}, func(c Config) bool { return c.HotQPS == 30000 && c.WarmQPS == 5000 }},
		{"top_n follows a small local_size", []Option{WithLocalSize(4)}, func(c Config) bool { return c.TopN == 4 }},
		{"local_size follows a large top_n", []Option{WithTopN(500)}, func(c Config) bool { return c.LocalSize == 500 }},
		{"refresh follows a short local_ttl", []Option{WithLocalTTL(4 * time.Second)}, func(c Config) bool { return c.Refresh == 2*time.Second }},
		{"a disabled refresh stays disabled", []Option{WithLocalTTL(4 * time.Second), WithRefresh(0)}, func(c Config) bool { return c.Refresh == 0 }},
		{"local_ttl follows a long refresh", []Option{WithRefresh(2 * time.Hour)}, func(c Config) bool { return c.LocalTTL == 4*time.Hour }},
		{"max_value_bytes follows a lower hard limit", []Option{WithMaxValueBytesHard(100)}, func(c Config) bool { return c.MaxValueBytes == 100 }},
		{"the defaults are their own", nil, func(c Config) bool {
			return c.WarmQPS == DefaultWarmQPS && c.TopN == DefaultTopN && c.Refresh == DefaultRefresh
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(tt.opts...)
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if r := cfg.Resolved(); !tt.want(r) {
				t.Fatalf("resolved: hot %v warm %v top_n %d local_size %d refresh %v local_ttl %v max_value_bytes %d",
					r.HotQPS, r.WarmQPS, r.TopN, r.LocalSize, r.Refresh, r.LocalTTL, r.MaxValueBytes)
			}
		})
	}
}

// Validate reports every problem at once, so a user fixes them in one go.
func TestConfigValidateReportsEveryProblem(t *testing.T) {
	cfg := testConfig(WithTopN(500), WithLocalSize(10), WithRefresh(2*time.Hour), WithLocalTTL(time.Hour), WithJitter(2))
	err := cfg.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		got = append(got, e.(*ConfigError).Option)
	}
	if want := []string{"jitter", "top_n", "refresh"}; !slices.Equal(got, want) {
		t.Fatalf("Validate() blamed %q, want %q:\n%v", got, want, err)
	}
}

// A nil Option, which a caller builds by mistake (a var left unset, a
// slice with a hole), is refused with an error that says which, instead
// of a nil dereference inside New.
func TestANilOptionIsRefused(t *testing.T) {
	var unset Option
	rdb := redis.NewClient(&redis.Options{Addr: deadAddr(t)})
	t.Cleanup(func() { rdb.Close() })
	_, err := New(rdb, profileGlue, WithLogger(quiet), unset)
	if err == nil || !strings.Contains(err.Error(), "option 2 of 2 is nil") {
		t.Fatalf("New with a nil option = %v, want it named", err)
	}
}
