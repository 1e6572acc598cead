package codec

import "encoding/binary"

// Probe sizes. The probe samples about one byte in 32 of a value, between
// probeMin and probeMax bytes in all, as windows of probeWindow bytes spread
// evenly over it; values shorter than probeMin are sampled whole. Its cost
// is about 1.5 ns per sampled byte, so it stays a small part of what even
// the fastest compressor spends on the whole value.
const (
	probeMin    = probeWindow
	probeMax    = 1024
	probeWindow = 128
	probeBits   = 9 // fingerprint table of 1 << probeBits entries

	// probeFrom is the shortest value ever probed. Compressing shorter
	// values costs too little for a probe to save anything.
	probeFrom = 256
)

// compressible is a cheap guess at whether a compressor can gain on src. It
// says no only for data in which hardly any 4-byte sequence repeats and,
// when entropy is true (the algorithm also gains from an uneven spread of
// byte values), whose sampled bytes are spread almost evenly over all 256
// values. Random bytes, encrypted and already compressed data look like that.
func compressible(src []byte, entropy bool) bool {
	n := len(src)
	budget := min(max(n/32, probeMin), probeMax)
	k, size, stride := 1, n, 0
	if n > budget {
		k, size = budget/probeWindow, probeWindow
		if k == 1 {
			src = src[(n-size)/2:] // one window: from the middle
		} else {
			stride = (n - probeWindow) / (k - 1)
		}
	}
	// Repeats first: on compressible data the first window usually settles
	// it, so the probe costs little where the compressor will run anyway.
	return repeats(src, k, size, stride) || entropy && uneven(src, k, size, stride)
}

// uneven reports whether the bytes of k windows of size bytes, stride bytes
// apart, are spread over the 256 values unevenly enough for an entropy coder
// to gain.
func uneven(src []byte, k, size, stride int) bool {
	var hist [256]uint16 // counts stay within probeMax
	// The sum of squared counts, kept as counts grow: (c+1)² = c² + 2c + 1.
	sq := 0
	for i := range k {
		for _, b := range src[i*stride : i*stride+size] {
			c := int(hist[b])
			sq += 2*c + 1
			hist[b] = uint16(c + 1)
		}
	}
	// For evenly spread bytes the sum is close to t + t(t-1)/256. More than
	// 10% above that is a collision entropy under about 7.86 bits per byte.
	t := k * size
	even := t + t*(t-1)/256
	return sq*10 > even*11
}

// repeats reports whether enough positions of k windows start a 4-byte
// sequence seen before (in any window), as an LZ matcher would find them.
// Random data has almost none.
func repeats(src []byte, k, size, stride int) bool {
	var table [1 << probeBits]uint32
	const shift = 32 - probeBits
	// One position in 32 (of the whole sample) starting a repeat is enough
	// to try.
	need := k * size / 32
	matches := 0
	for i := range k {
		w := src[i*stride : i*stride+size]
		// One 8-byte load yields the 4-byte sequences at four positions.
		j := 0
		for ; j+8 <= len(w); j += 4 {
			u := binary.LittleEndian.Uint64(w[j:])
			v0, v1, v2, v3 := uint32(u), uint32(u>>8), uint32(u>>16), uint32(u>>24)
			h0, h1, h2, h3 := (v0*0x9E3779B1)>>shift, (v1*0x9E3779B1)>>shift, (v2*0x9E3779B1)>>shift, (v3*0x9E3779B1)>>shift
			matches += b2i(table[h0] == v0)
			table[h0] = v0
			matches += b2i(table[h1] == v1)
			table[h1] = v1
			matches += b2i(table[h2] == v2)
			table[h2] = v2
			matches += b2i(table[h3] == v3)
			table[h3] = v3
			if matches >= need && matches > 0 {
				return true
			}
		}
		for ; j+4 <= len(w); j++ {
			v := binary.LittleEndian.Uint32(w[j:])
			h := (v * 0x9E3779B1) >> shift
			matches += b2i(table[h] == v)
			table[h] = v
		}
		if matches >= need && matches > 0 {
			return true
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
