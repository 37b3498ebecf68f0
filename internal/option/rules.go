package option

import (
	"fmt"
	"time"
)

// The rules of single values a Table's rows share, each returning "" when
// the value keeps it, or what is wrong.

// PositiveDuration is the rule of a duration that must pass.
func PositiveDuration(d time.Duration) string {
	if d <= 0 {
		return fmt.Sprintf("must be a positive duration, got %v", d)
	}
	return ""
}

// Disables is the rule of a duration that 0 turns off.
func Disables(d time.Duration) string {
	if d < 0 {
		return fmt.Sprintf("must not be negative (0 disables it), got %v", d)
	}
	return ""
}

// Expiry is the rule of a duration Redis keeps as an expiry.
func Expiry(d time.Duration) string {
	if d > 0 && d < time.Millisecond {
		return fmt.Sprintf("Redis expiries have millisecond resolution, got %v", d)
	}
	return ""
}

// AMillisecond is the rule of a duration of at least a millisecond.
func AMillisecond(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("must be at least 1ms, got %v", d)
	}
	return ""
}

// Positive is the rule of a count that must be positive.
func Positive(n int) string {
	if n <= 0 {
		return fmt.Sprintf("must be positive, got %d", n)
	}
	return ""
}

// BelowOne is the rule of a fraction from 0 up to but not including 1:
// jitter's.
func BelowOne(f float64) string {
	if f < 0 || f >= 1 || f != f {
		return fmt.Sprintf("must be a fraction from 0 up to but not including 1, got %v", f)
	}
	return ""
}
