package track

import "testing"

func TestHashSlot(t *testing.T) {
	for _, c := range []struct {
		key  string
		slot int
	}{
		{"123456789", 12739}, // the CRC16 check value 0x31C3, mod 16384
		{"user:1000", HashSlot("user:1000")},
		{"{user1000}.following", HashSlot("user1000")},
		{"{user1000}.followers", HashSlot("user1000")},
		{"foo{}{bar}", int(crc16("foo{}{bar}") % SlotCount)}, // an empty tag hashes the whole key
		{"foo{{bar}}zap", HashSlot("{bar")},
		{"foo{bar}{zap}", HashSlot("bar")},
		{"{", int(crc16("{") % SlotCount)},
	} {
		if got := HashSlot(c.key); got != c.slot {
			t.Errorf("HashSlot(%q) = %d, want %d", c.key, got, c.slot)
		}
	}
}
