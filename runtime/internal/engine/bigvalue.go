package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
	"github.com/hotkeygen/hotkeygen/runtime/internal/throttle"
)

// ErrValueTooLarge reports a write rejected by max_value_bytes_hard.
var ErrValueTooLarge = errors.New("value too large")

// sizes counts and warns about big values, read or written, and refuses
// writes above the hard limit (max_value_bytes, max_value_bytes_hard).
type sizes struct {
	warn, hard int
	now        func() time.Time
	log        *slog.Logger
	count      *atomic.Uint64 // Stats.BigValues
	big        throttle.Keys  // the keys whose big values were warned about
}

// check counts and warns about an encoded value of n bytes at key, read
// or written (op), and for writes enforces the hard limit: its error is
// the cause of the write's (opErr).
func (s *sizes) check(op, key string, n int) error {
	if op == "write" && s.hard > 0 && n > s.hard {
		return fmt.Errorf("%w: %d bytes encoded, above max_value_bytes_hard %d; store less, or split the value", ErrValueTooLarge, n, s.hard)
	}
	if s.warn == 0 || n <= s.warn {
		return nil
	}
	s.count.Add(1)
	if s.big.Due(key, s.now()) { // once a minute per key (runtime/internal/throttle)
		s.log.Warn("hotkey: big value", "op", op, "key", operr.Short(key), "bytes", n, "max_value_bytes", s.warn)
	}
	return nil
}
