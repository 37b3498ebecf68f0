package track

import "strings"

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = 16384

// HashSlot returns the cluster hash slot of key, as Redis computes it:
// CRC16 (XMODEM) of the key, or of its hash tag, the part between the
// first '{' and the next '}' when that part is not empty. Keys of one slot
// can share an MGET; go-redis keeps its own function internal.
func HashSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16(key) % SlotCount)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), the
// checksum of the cluster specification.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
