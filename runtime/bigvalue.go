package runtime

import (
	"errors"
	"fmt"

	"github.com/hotkeygen/hotkeygen/runtime/internal/operr"
)

// ErrValueTooLarge reports a write rejected by max_value_bytes_hard.
var ErrValueTooLarge = errors.New("value too large")

// checkSize counts and warns about an encoded value of n bytes at key, read
// or written (op), and for writes enforces the hard limit: its error is
// the cause of the write's (opErr).
func (c *Cache[K, V]) checkSize(op, key string, n int) error {
	if hard := c.cfg.MaxValueBytesHard; op == "write" && hard > 0 && n > hard {
		return fmt.Errorf("%w: %d bytes encoded, above max_value_bytes_hard %d; store less, or split the value", ErrValueTooLarge, n, hard)
	}
	if c.cfg.MaxValueBytes == 0 || n <= c.cfg.MaxValueBytes {
		return nil
	}
	c.count.bigValues.Add(1)
	if c.big.Due(key, c.cfg.Clock.Now()) { // once a minute per key (runtime/internal/throttle)
		c.log.Warn("hotkey: big value", "op", op, "key", operr.Short(key), "bytes", n, "max_value_bytes", c.cfg.MaxValueBytes)
	}
	return nil
}
