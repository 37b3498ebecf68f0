package redistest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandStat returns a field of cmd's line in INFO commandstats on rdb's
// server: "calls", or "rejected_calls" (refused, by an ACL for one); 0 for
// a command the server has not run since its start or its last CONFIG
// RESETSTAT. Subcommands are written as the server names them:
// "client|id".
func CommandStat(t testing.TB, rdb redis.Cmdable, cmd, field string) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		stats, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for kv := range strings.SplitSeq(strings.TrimSpace(stats), ",") {
			if v, ok := strings.CutPrefix(kv, field+"="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("INFO commandstats %s: %v", cmd, err)
				}
				return n
			}
		}
	}
	return 0 // never run
}
