package codec

import (
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Defaults for the zero values of Options.
const (
	// DefaultThreshold is the smallest value compressed when
	// Options.Threshold is zero.
	DefaultThreshold = 1 << 10
	// DefaultMaxDecodedSize bounds decoded values when
	// Options.MaxDecodedSize is zero.
	DefaultMaxDecodedSize = 8 << 20
	// CompressAll, as Options.Threshold, compresses values of every length
	// (a value of zero bytes never is: it cannot get shorter).
	CompressAll = 1
)

// UnframedPolicy says what decoding does with a value that has no frame.
type UnframedPolicy uint8

const (
	// UnframedReject fails with ErrNotFramed. It is the default.
	UnframedReject UnframedPolicy = iota
	// UnframedPassThrough returns a value that does not start with the frame
	// magic as it is. Use it while migrating from plain values; it gives up
	// the detection of damage to a frame's first two bytes.
	UnframedPassThrough
)

// Options configure a Codec. The zero value writes raw frames (algorithm
// None) with a 1 KiB threshold and an 8 MiB decoding limit.
type Options struct {
	// Algorithm compresses values; nil means None: frames that hold the value
	// raw, with its checksum.
	Algorithm Algorithm

	// Threshold is the length from which a value is compressed. Zero means
	// DefaultThreshold (1 KiB); CompressAll compresses every value.
	Threshold int

	// MaxDecodedSize bounds the original length of decoded values, and so of
	// encoded ones. Zero means DefaultMaxDecodedSize (8 MiB); at most
	// 4 GiB - 1, the largest length a frame can hold. It bounds values
	// passed through unframed (UnframedPassThrough) too.
	MaxDecodedSize int

	// Decoders are further algorithms this Codec can read, such as lz4 or
	// brotli frames written by another Codec. None, Zstd, Deflate, S2 and
	// Algorithm are always readable.
	Decoders []Algorithm

	// Unframed says what decoding does with values written without a frame.
	Unframed UnframedPolicy

	// NoProbe disables the incompressibility probe, so that every value at
	// or above Threshold is handed to the compressor.
	NoProbe bool
}

// A Codec encodes values into frames and decodes them. It is safe for
// concurrent use.
type Codec struct {
	alg       Algorithm
	threshold int
	maxSize   int
	pass      bool
	probe     Probe
	decoders  [256]Algorithm
}

// New returns a Codec for opts, or an error if an option is out of range.
func New(opts Options) (*Codec, error) {
	c := &Codec{
		alg:       opts.Algorithm,
		threshold: opts.Threshold,
		maxSize:   opts.MaxDecodedSize,
		pass:      opts.Unframed == UnframedPassThrough,
	}
	if c.alg == nil {
		c.alg = None()
	}
	switch {
	case c.threshold < 0:
		return nil, fmt.Errorf("respire: codec: negative Threshold %d", c.threshold)
	case c.threshold == 0:
		c.threshold = DefaultThreshold
	}
	switch {
	case c.maxSize < 0 || uint64(c.maxSize) > maxFrameLen:
		return nil, fmt.Errorf("respire: codec: MaxDecodedSize %d out of range [0, %d]", c.maxSize, uint64(maxFrameLen))
	case c.maxSize == 0:
		c.maxSize = DefaultMaxDecodedSize
	}
	if opts.Unframed > UnframedPassThrough {
		return nil, fmt.Errorf("respire: codec: unknown UnframedPolicy %d", opts.Unframed)
	}
	c.probe = c.alg.Probe()
	c.probe.From = max(c.probe.From, probeFrom)
	if opts.NoProbe {
		c.probe.Kind = ProbeNone
	}
	for _, a := range []Algorithm{None(), Zstd(DefaultZstdLevel), Deflate(), S2()} {
		c.decoders[a.ID()] = a
	}
	for _, a := range opts.Decoders {
		if a == nil {
			return nil, errors.New("respire: codec: nil algorithm in Decoders")
		}
		c.decoders[a.ID()] = a
	}
	for _, a := range append([]Algorithm{c.alg}, opts.Decoders...) {
		if b, ok := a.(invalidAlgorithm); ok {
			return nil, b.invalid()
		}
	}
	c.decoders[c.alg.ID()] = c.alg
	return c, nil
}

// MustNew is like New but panics on invalid options. It suits package-level
// variables with constant options.
func MustNew(opts Options) *Codec {
	c, err := New(opts)
	if err != nil {
		panic(err)
	}
	return c
}

// Algorithm returns the algorithm the Codec compresses with.
func (c *Codec) Algorithm() Algorithm { return c.alg }

// MaxEncodedLen returns the longest frame that encoding n bytes produces.
// While compressing, AppendEncode may need more spare capacity than that
// (S2 wants room for its worst case); it grows dst then, and a caller that
// reuses the returned slice pays for that once.
func MaxEncodedLen(n int) int { return HeaderSize + n }

// AppendEncode appends the frame of src to dst and returns the extended
// slice. It allocates only when dst lacks room: reuse the returned slice's
// capacity (for example out[:0]) and steady-state encoding allocates nothing.
// It fails with ErrTooLarge when src is longer than Options.MaxDecodedSize.
// src must not overlap the spare capacity of dst.
func (c *Codec) AppendEncode(dst, src []byte) ([]byte, error) {
	n := len(src)
	if n > c.maxSize {
		return dst, fmt.Errorf("%w: %d bytes, limit is %d", ErrTooLarge, n, c.maxSize)
	}
	start := len(dst)
	dst = grow(dst, HeaderSize+n)
	body := start + HeaderSize
	dst = dst[:body]
	alg := IDNone
	// A payload must be shorter than n-HeaderSize for the frame to be
	// shorter than the value; values that short cannot gain.
	if limit := n - HeaderSize - 1; limit > 0 && n >= c.threshold && c.alg.ID() != IDNone &&
		(c.probe.Kind == ProbeNone || n < c.probe.From || compressible(src, c.probe.Kind == ProbeFull)) {
		out, err := c.alg.Compress(dst, src, limit)
		switch {
		case err == nil && len(out)-body <= limit:
			dst, alg = out, c.alg.ID()
		case err == nil || errors.Is(err, ErrNoGain):
			if cap(out) > cap(dst) {
				dst = out[:body] // keep the larger buffer for the caller
			}
		default:
			return dst[:start], fmt.Errorf("respire: codec: %v: %w", c.alg.ID(), err)
		}
	}
	if alg == IDNone {
		dst = append(dst, src...)
	}
	sum := xxh3.Hash(src)
	if alg != IDNone {
		sum ^= xxh3.Hash(dst[body:])
	}
	putHeader(dst[start:], alg, n, len(dst)-body, sum)
	return dst, nil
}

// Encode returns the frame of src in a new slice.
func (c *Codec) Encode(src []byte) ([]byte, error) {
	return c.AppendEncode(nil, src)
}

// DecodedLen returns the original length recorded in frame, after checking
// its header. Decoding may still fail on the payload.
func (c *Codec) DecodedLen(frame []byte) (int, error) {
	if c.pass && !isFramed(frame) {
		return len(frame), c.checkUnframed(frame)
	}
	h, err := parseHeader(frame, c.maxSize)
	return h.size, err
}

// AppendDecode appends the value held by frame to dst and returns the
// extended slice. On error it returns dst unchanged, and no decoded byte is
// ever returned unverified. It allocates only when dst lacks room for the
// value. frame is only read, and not retained; it must not overlap the spare
// capacity of dst.
func (c *Codec) AppendDecode(dst, frame []byte) ([]byte, error) {
	h, err := parseHeader(frame, c.maxSize)
	if err != nil {
		if c.pass && err == ErrNotFramed {
			if err := c.checkUnframed(frame); err != nil {
				return dst, err
			}
			return append(dst, frame...), nil
		}
		return dst, err
	}
	// Checked before growing dst, so that a raw frame that lies about its
	// length costs no allocation.
	if h.alg == IDNone && h.payload != h.size {
		return dst, fmt.Errorf("%w: raw payload of %d bytes for a %d-byte value", ErrCorrupt, h.payload, h.size)
	}
	payload := frame[HeaderSize:]
	start := len(dst)
	out := grow(dst, h.size)
	want := h.checksum
	if h.alg == IDNone {
		out = append(out, payload...)
	} else {
		a := c.decoders[h.alg]
		if a == nil {
			return dst, fmt.Errorf("%w: %v is not among this Codec's decoders", ErrUnknownAlgorithm, h.alg)
		}
		// The checksum of a compressed frame also covers its payload, so
		// that damage in bits a format ignores is caught as well.
		want ^= xxh3.Hash(payload)
		out, err = a.Decompress(out, payload, h.size)
		if err != nil {
			return dst, fmt.Errorf("%w: %v: %s", ErrCorrupt, h.alg, trim(err))
		}
		if len(out)-start != h.size {
			return dst, fmt.Errorf("%w: %v payload decoded to %d bytes, frame says %d", ErrCorrupt, h.alg, len(out)-start, h.size)
		}
	}
	if xxh3.Hash(out[start:]) != want {
		return dst, ErrChecksum
	}
	return out, nil
}

// Decode returns the value held by frame in a new slice.
func (c *Codec) Decode(frame []byte) ([]byte, error) {
	if c.pass && !isFramed(frame) {
		if err := c.checkUnframed(frame); err != nil {
			return nil, err
		}
		return append([]byte(nil), frame...), nil
	}
	return c.AppendDecode(nil, frame)
}

// checkUnframed applies MaxDecodedSize to a value passed through unframed.
func (c *Codec) checkUnframed(value []byte) error {
	if len(value) > c.maxSize {
		return fmt.Errorf("%w: unframed value of %d bytes, limit is %d", ErrTooLarge, len(value), c.maxSize)
	}
	return nil
}

// invalidAlgorithm is an Algorithm built from bad arguments, such as
// Zstd(-1), that New refuses.
type invalidAlgorithm interface {
	invalid() error
}

// grow returns b with room for at least n more bytes.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}
