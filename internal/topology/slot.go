package topology

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = 16384

// Slot returns the hash slot of key: CRC16 (XMODEM) of the key, or of its
// hash tag, modulo 16384. The hash tag is the part between the first '{'
// and the first '}' after it, when that part is not empty; keys with the
// same tag share a slot, so multi-key commands can name them together.
func Slot(key string) uint16 {
	if s := indexByte(key, '{'); s >= 0 {
		if e := indexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^key[i]]
	}
	return crc & (SlotCount - 1)
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// crcTable is CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0),
// one entry per byte value.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
