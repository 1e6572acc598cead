// Package brotli provides the Brotli algorithm for package codec, from
// github.com/andybalholm/brotli. It is a separate package so that programs
// that do not use Brotli do not link it.
//
//	c, err := codec.New(codec.Options{Algorithm: brotli.New(0)})
package brotli

import (
	"errors"
	"math/bits"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/respire-go/respire/codec"
)

// DefaultQuality is the quality New uses when given 0.
const DefaultQuality = 4

type alg struct {
	quality int
	writers [maxWindowBits + 1]sync.Pool // *writer, by window bits
}

// Window sizes: Brotli's sliding window is 1<<bits - 16 bytes.
const (
	minWindowBits = 10
	maxWindowBits = 24
	// defaultWindowBits is the window a stream header can state in the
	// fewest bits; any stream may use it.
	defaultWindowBits = 16
)

// windowBitsFor returns the smallest window that holds n bytes, so that a
// small value is written with a small window and its decoder allocates a
// small ring buffer.
func windowBitsFor(n int) int {
	return min(max(bits.Len(uint(n+15)), minWindowBits), maxWindowBits)
}

// windowBits reads the window size from a stream's first byte (RFC 7932,
// section 9.1), or 0 if the header is invalid or asks for a large window.
func windowBits(b byte) int {
	if b&1 == 0 {
		return 16
	}
	if n := int(b>>1) & 7; n != 0 {
		return 17 + n
	}
	switch n := int(b>>4) & 7; n {
	case 0:
		return 17
	case 1:
		return 0
	default:
		return 8 + n
	}
}

type writer struct {
	w   *brotli.Writer
	out codec.LimitWriter
}

type reader struct {
	r   *brotli.Reader
	in  codec.SliceReader
	one [1]byte
}

var (
	mu      sync.Mutex
	byLevel = map[int]*alg{}
	readers sync.Pool // *reader, shared by all qualities
)

// New returns Brotli at quality 1 to 11; 0 means DefaultQuality (4). Calls
// with the same quality return the same value, which pools its writers.
func New(quality int) codec.Algorithm {
	if quality <= 0 {
		quality = DefaultQuality
	}
	quality = min(quality, brotli.BestCompression)
	mu.Lock()
	defer mu.Unlock()
	a := byLevel[quality]
	if a == nil {
		a = &alg{quality: quality}
		byLevel[quality] = a
	}
	return a
}

func (*alg) ID() codec.ID       { return codec.IDBrotli }
func (*alg) Probe() codec.Probe { return codec.Probe{Kind: codec.ProbeFull} }

func (a *alg) Compress(dst, src []byte, limit int) ([]byte, error) {
	wb := windowBitsFor(len(src))
	bw, _ := a.writers[wb].Get().(*writer)
	if bw == nil {
		bw = &writer{}
		bw.w = brotli.NewWriterOptions(&bw.out, brotli.WriterOptions{Quality: a.quality, LGWin: wb})
	}
	bw.out = codec.LimitWriter{Buf: dst, Base: len(dst), Limit: limit}
	bw.w.Reset(&bw.out)
	_, err := bw.w.Write(src)
	if err == nil {
		err = bw.w.Close()
	}
	out := bw.out.Buf
	bw.out.Buf = nil
	a.writers[wb].Put(bw)
	if err != nil {
		return out[:len(dst)], err
	}
	return out, nil
}

func (*alg) Decompress(dst, src []byte, n int) ([]byte, error) {
	// The decoder allocates a ring buffer as large as the stream's window:
	// refuse windows larger than the value needs before it does.
	if len(src) == 0 {
		return dst, errors.New("respire: codec: empty brotli stream")
	}
	if wb := windowBits(src[0]); wb == 0 || wb > max(windowBitsFor(n), defaultWindowBits) {
		return dst, errors.New("respire: codec: brotli window larger than the original length needs")
	}
	br, _ := readers.Get().(*reader)
	if br == nil {
		br = &reader{}
		br.in.B = src
		br.r = brotli.NewReader(&br.in)
	} else {
		br.in.B = src
		if err := br.r.Reset(&br.in); err != nil {
			return dst, err
		}
	}
	out, err := codec.ReadExact(dst, br.r, n, br.one[:])
	br.in.B = nil
	readers.Put(br)
	return out, err
}
