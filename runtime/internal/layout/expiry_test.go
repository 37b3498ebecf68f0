package layout

import (
	"testing"
	"time"
)

func TestExpiresAt(t *testing.T) {
	sent := time.Unix(1_700_000_000, 123_456_789) // 0.456789 ms into its millisecond
	ms := sent.Truncate(time.Millisecond).UnixNano()
	for _, c := range []struct {
		name string
		left time.Duration
		want int64
	}{
		{"no TTL: no expiry", -1, 0},
		{"no key: expired when the read was sent", -2, ms},
		{"counted from the start of sent's millisecond", 1500 * time.Millisecond, ms + int64(1500*time.Millisecond)},
		{"a key expiring now", 0, ms},
	} {
		if got := ExpiresAt(sent, c.left); got != c.want {
			t.Errorf("%s: ExpiresAt(sent, %v) = %d, want %d", c.name, c.left, got, c.want)
		}
	}
	if got := ExpiresAt(time.Unix(0, 0), 0); got != 1 {
		t.Errorf("at the epoch: %d, want 1 (0 means no expiry)", got)
	}
	if got := WroteExpiry(sent, 0); got != 0 {
		t.Errorf("WroteExpiry without a TTL = %d, want 0", got)
	}
	if got := WroteExpiry(sent, time.Second); got != ms+int64(time.Second) {
		t.Errorf("WroteExpiry(sent, 1s) = %d, want %d", got, ms+int64(time.Second))
	}
}

func TestHashExpiry(t *testing.T) {
	for _, c := range []struct {
		name  string
		items []hashWrite
		want  int64
	}{
		{"the latest until", []hashWrite{{until: 5}, {until: 9}, {until: 7}}, 9 * int64(time.Millisecond)},
		{"an item living for ever", []hashWrite{{until: 5}, {until: 0}}, 0},
		{"no items", nil, 0},
	} {
		if got := hashExpiry(c.items); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
