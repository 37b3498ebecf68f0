package runtime

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrValueTooLarge reports a write rejected by max_value_bytes_hard.
var ErrValueTooLarge = errors.New("value too large")

// bigWarnEvery limits warnings about one key's big value.
const bigWarnEvery = time.Minute

// bigWarnKeys bounds the memory of which keys were warned about recently.
const bigWarnKeys = 1024

// bigValues counts values above MaxValueBytes and warns about each key at
// most once per minute, in bounded memory.
type bigValues struct {
	mu   sync.Mutex
	last map[string]time.Time
}

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
	now := c.cfg.Clock.Now()
	b := &c.big
	b.mu.Lock()
	last, seen := b.last[key]
	warn := !seen || now.Sub(last) >= bigWarnEvery
	if warn {
		if len(b.last) >= bigWarnKeys {
			for k, t := range b.last {
				if now.Sub(t) >= bigWarnEvery {
					delete(b.last, k)
				}
			}
			if len(b.last) >= bigWarnKeys {
				clear(b.last)
			}
		}
		if b.last == nil {
			b.last = map[string]time.Time{}
		}
		b.last[key] = now
	}
	b.mu.Unlock()
	if warn {
		c.log.Warn("hotkey: big value", "op", op, "key", key, "bytes", n, "max_value_bytes", c.cfg.MaxValueBytes)
	}
	return nil
}
