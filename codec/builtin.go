package codec

import (
	"errors"
	"io"
)

type none struct{}

var noneAlg Algorithm = none{}

// None returns the algorithm that stores values raw in the frame.
func None() Algorithm { return noneAlg }

func (none) ID() ID       { return IDNone }
func (none) Probe() Probe { return Probe{} }

func (none) Compress(dst, src []byte, limit int) ([]byte, error) {
	if len(src) > limit {
		return dst, ErrNoGain
	}
	return append(dst, src...), nil
}

func (none) Decompress(dst, src []byte, n int) ([]byte, error) {
	if len(src) != n {
		return dst, errors.New("respire: codec: raw payload length differs from the original length")
	}
	return append(dst, src...), nil
}

// LimitWriter is an io.Writer that appends to a byte slice and fails with
// ErrNoGain once more than Limit bytes were written past Base. Stream
// compressors write into it so that they stop as soon as their output is too
// long to pay off. It is exported for Algorithm implementations in other
// packages.
type LimitWriter struct {
	Buf   []byte // the slice written to
	Base  int    // len(Buf) when compression started
	Limit int    // the most bytes that may follow Base
}

// Write appends p to Buf, or fails with ErrNoGain past the limit.
func (w *LimitWriter) Write(p []byte) (int, error) {
	if len(w.Buf)-w.Base+len(p) > w.Limit {
		return 0, ErrNoGain
	}
	w.Buf = append(w.Buf, p...)
	return len(p), nil
}

// SliceReader is an io.Reader over a byte slice that, unlike bytes.Reader, can
// be reset without allocating and exposes no more than it must. It is
// exported for Algorithm implementations in other packages.
type SliceReader struct {
	B []byte
}

// Read copies from B and advances it.
func (r *SliceReader) Read(p []byte) (int, error) {
	if len(r.B) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.B)
	r.B = r.B[n:]
	return n, nil
}

// ReadByte returns the next byte of B. Decompressors that find an
// io.ByteReader read through it instead of wrapping the reader in a buffer.
func (r *SliceReader) ReadByte() (byte, error) {
	if len(r.B) == 0 {
		return 0, io.EOF
	}
	b := r.B[0]
	r.B = r.B[1:]
	return b, nil
}

// ReadExact reads exactly n bytes from a decompressing reader into
// dst[len(dst):len(dst)+n] and then checks that the stream ends there. The
// caller guarantees the capacity. It never reads more than n+1 bytes, so a
// stream that expands further is refused at once. scratch is at least one
// byte that it may overwrite: keep it beside the pooled reader, so that the
// call allocates nothing. It is exported for Algorithm implementations in
// other packages.
func ReadExact(dst []byte, r io.Reader, n int, scratch []byte) ([]byte, error) {
	start := len(dst)
	out := dst[start : start+n]
	if _, err := io.ReadFull(r, out); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return dst, errors.New("respire: codec: stream ends before the original length")
		}
		return dst, err
	}
	for {
		k, err := r.Read(scratch[:1])
		if k > 0 {
			return dst, errors.New("respire: codec: stream continues past the original length")
		}
		if err == io.EOF {
			return dst[:start+n], nil
		}
		if err != nil {
			return dst, err
		}
	}
}
