package codec

import (
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// deflateAlg writes raw deflate streams at the fastest level.
type deflateAlg struct {
	writers sync.Pool // *deflateWriter
	readers sync.Pool // *deflateReader
}

type deflateWriter struct {
	w   *flate.Writer
	out LimitWriter
}

type deflateReader struct {
	r   io.ReadCloser
	in  SliceReader
	one [1]byte
}

var deflateShared = &deflateAlg{}

// Deflate returns raw deflate (RFC 1951) at the fastest level, from
// github.com/klauspost/compress/flate.
func Deflate() Algorithm { return deflateShared }

func (a *deflateAlg) ID() ID       { return IDDeflate }
func (a *deflateAlg) Probe() Probe { return Probe{Kind: ProbeFull} }

func (a *deflateAlg) Compress(dst, src []byte, limit int) ([]byte, error) {
	dw, _ := a.writers.Get().(*deflateWriter)
	if dw == nil {
		dw = &deflateWriter{}
		w, err := flate.NewWriter(&dw.out, flate.BestSpeed)
		if err != nil {
			return dst, err
		}
		dw.w = w
	}
	dw.out = LimitWriter{Buf: dst, Base: len(dst), Limit: limit}
	dw.w.Reset(&dw.out)
	_, err := dw.w.Write(src)
	if err == nil {
		err = dw.w.Close()
	}
	out := dw.out.Buf
	dw.out.Buf = nil
	a.writers.Put(dw)
	if err != nil {
		return out[:len(dst)], err
	}
	return out, nil
}

func (a *deflateAlg) Decompress(dst, src []byte, n int) ([]byte, error) {
	dr, _ := a.readers.Get().(*deflateReader)
	if dr == nil {
		dr = &deflateReader{}
		dr.in.B = src
		dr.r = flate.NewReader(&dr.in)
	} else {
		dr.in.B = src
		if err := dr.r.(flate.Resetter).Reset(&dr.in, nil); err != nil {
			return dst, err
		}
	}
	out, err := ReadExact(dst, dr.r, n, dr.one[:])
	dr.in.B = nil
	a.readers.Put(dr)
	return out, err
}
