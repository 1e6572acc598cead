// Package lz4 provides the LZ4 block algorithm for package codec, from
// github.com/pierrec/lz4/v4. It is a separate package so that programs that
// do not use LZ4 do not link it.
//
//	c, err := codec.New(codec.Options{Algorithm: lz4.New()})
package lz4

import (
	"errors"
	"sync"

	"github.com/pierrec/lz4/v4"
	"github.com/respire-go/respire/codec"
)

type alg struct {
	compressors sync.Pool // *lz4.Compressor
}

var shared = &alg{}

// New returns the LZ4 block algorithm at its fast (default) level. All calls
// return the same value, which pools its compressors.
func New() codec.Algorithm { return shared }

func (*alg) ID() codec.ID       { return codec.IDLZ4 }
func (*alg) Probe() codec.Probe { return codec.Probe{Kind: codec.ProbeRepeats} }

func (a *alg) Compress(dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	if cap(dst)-start < limit {
		nb := make([]byte, start, start+limit)
		copy(nb, dst)
		dst = nb
	}
	c, _ := a.compressors.Get().(*lz4.Compressor)
	if c == nil {
		c = new(lz4.Compressor)
	}
	// With room for only limit bytes the compressor gives up as soon as its
	// output does not fit: 0 or an error both mean no gain.
	k, err := c.CompressBlock(src, dst[start:start+limit])
	a.compressors.Put(c)
	if k == 0 || err != nil {
		return dst, codec.ErrNoGain
	}
	return dst[:start+k], nil
}

func (*alg) Decompress(dst, src []byte, n int) ([]byte, error) {
	start := len(dst)
	k, err := lz4.UncompressBlock(src, dst[start:start+n])
	if err != nil {
		return dst, err
	}
	if k != n {
		return dst, errors.New("respire: codec: lz4 block is shorter than the original length")
	}
	return dst[:start+n], nil
}
