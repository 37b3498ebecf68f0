package aggregate

import (
	"testing"
	"time"
)

func TestParseReadsBackWhatKeyNames(t *testing.T) {
	tests := []struct {
		key    string
		entity string
		slot   int64
		ok     bool
	}{
		{Key("user", 1795000000), "user", 1795000000, true},
		{Key("orderLine", 7), "orderLine", 7, true},
		{Key("a:b", 42), "a:b", 42, true}, // the slot is after the last colon
		{"hotkeygen:agg:user", "", 0, false},
		{"hotkeygen:agg::5", "", 0, false}, // no entity
		{"hotkeygen:agg:user:x", "", 0, false},
		{"hotkeygen:invalidate:user:", "", 0, false},
	}
	for _, tt := range tests {
		entity, slot, ok := Parse(tt.key)
		if entity != tt.entity || slot != tt.slot || ok != tt.ok {
			t.Errorf("Parse(%q) = %q, %d, %v; want %q, %d, %v", tt.key, entity, slot, ok, tt.entity, tt.slot, tt.ok)
		}
	}
}

func TestSpanEndsTwoSlotsBeforeNow(t *testing.T) {
	now := time.Unix(1000, 500_000_000) // in slot 1000 of 1s, and 10005 of 100ms
	if first, last := Span(now, 10*time.Second); first != 989 || last != 998 {
		t.Errorf("Span = %d..%d, want 989..998: ten slots, the last two before the current one", first, last)
	}
	if first, last := Span(now, time.Second); first != 9994 || last != 10003 {
		t.Errorf("Span with 100ms slots = %d..%d, want 9994..10003", first, last)
	}
}
