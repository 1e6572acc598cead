package codec

import (
	"errors"

	"github.com/klauspost/compress/s2"
)

type s2Alg struct{}

var s2Shared Algorithm = s2Alg{}

// S2 returns the S2 block format at its default speed, from
// github.com/klauspost/compress/s2. S2 extends Snappy: it reads Snappy
// blocks, but Snappy cannot read S2 blocks.
func S2() Algorithm { return s2Shared }

func (s2Alg) ID() ID { return IDS2 }

// Probe starts at 4 KiB: S2 gives up on shorter incompressible input about
// as fast as the probe would tell, and compresses shorter text in little more
// time than the probe takes.
func (s2Alg) Probe() Probe { return Probe{Kind: ProbeRepeats, From: 4 << 10} }

func (s2Alg) Compress(dst, src []byte, limit int) ([]byte, error) {
	// s2.Encode needs its worst case as room; the room past the result stays
	// in the caller's buffer for the next call.
	start := len(dst)
	dst = grow(dst, s2.MaxEncodedLen(len(src)))
	enc := s2.Encode(dst[start:cap(dst)], src)
	if len(enc) > limit {
		return dst[:start], ErrNoGain
	}
	return dst[:start+len(enc)], nil
}

func (s2Alg) Decompress(dst, src []byte, n int) ([]byte, error) {
	m, err := s2.DecodedLen(src)
	if err != nil {
		return dst, err
	}
	if m != n {
		return dst, errors.New("respire: codec: s2 block length differs from the original length")
	}
	start := len(dst)
	dec, err := s2.Decode(dst[start:start+n], src)
	if err != nil {
		return dst, err
	}
	if len(dec) != n || (n > 0 && &dec[0] != &dst[start : start+1][0]) {
		return dst, errors.New("respire: codec: s2 block decoded outside the destination")
	}
	return dst[:start+n], nil
}
