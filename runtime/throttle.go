package runtime

import (
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/throttle"
)

// logThrottle spaces the log lines of one kind of failure
// (throttle.Lines); its allow is the one transport.go calls.
type logThrottle struct{ throttle.Lines }

func (t *logThrottle) allow(now time.Time, every time.Duration) (unlogged int, ok bool) {
	return t.Allow(now, every)
}
