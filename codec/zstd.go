package codec

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// DefaultZstdLevel is the zstd level used when Zstd is given level 0.
const DefaultZstdLevel = 3

type zstdAlg struct {
	level int
	once  sync.Once
	enc   *zstd.Encoder
	dec   *zstd.Decoder
	err   error
}

var (
	zstdMu     sync.Mutex
	zstdLevels = map[int]*zstdAlg{}
)

// Zstd returns the zstd algorithm at a level on zstd's scale, 1 to 22; 0
// means DefaultZstdLevel (3). github.com/klauspost/compress maps the levels
// onto four encoder speeds: 1 fastest, 2 to 5 default, 6 to 9 better, 10 and
// above best. Calls with the same level share one pooled encoder and decoder.
// Any other level (zstd's negative "fast" levels included, which that
// library lacks) gives an algorithm that New refuses and whose every call
// fails.
func Zstd(level int) Algorithm {
	if level < 0 || level > 22 {
		return badZstdLevel(level)
	}
	if level == 0 {
		level = DefaultZstdLevel
	}
	zstdMu.Lock()
	defer zstdMu.Unlock()
	a := zstdLevels[level]
	if a == nil {
		a = &zstdAlg{level: level}
		zstdLevels[level] = a
	}
	return a
}

func (a *zstdAlg) init() {
	a.once.Do(func() {
		// EncodeAll and DecodeAll are safe for concurrent use; the
		// concurrency options size their internal pools (GOMAXPROCS). No
		// goroutines run for these all-at-once calls.
		a.enc, a.err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(a.level)),
			zstd.WithEncoderCRC(false), // the frame has its own checksum
			zstd.WithEncoderConcurrency(0),
			zstd.WithLowerEncoderMem(true),
		)
		if a.err != nil {
			return
		}
		a.dec, a.err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecodeAllCapLimit(true), // never write past the room we give
			zstd.WithDecoderMaxMemory(math.MaxUint32),
			zstd.IgnoreChecksum(true),
		)
	})
}

// badZstdLevel is what Zstd returns for a level out of range.
type badZstdLevel int

func (l badZstdLevel) invalid() error {
	return fmt.Errorf("respire: codec: zstd level %d is not from 1 to 22 (or 0 for DefaultZstdLevel)", int(l))
}

func (badZstdLevel) ID() ID       { return IDZstd }
func (badZstdLevel) Probe() Probe { return Probe{Kind: ProbeFull} }

func (l badZstdLevel) Compress(dst, _ []byte, _ int) ([]byte, error)   { return dst, l.invalid() }
func (l badZstdLevel) Decompress(dst, _ []byte, _ int) ([]byte, error) { return dst, l.invalid() }

func (a *zstdAlg) ID() ID       { return IDZstd }
func (a *zstdAlg) Probe() Probe { return Probe{Kind: ProbeFull} }

func (a *zstdAlg) Compress(dst, src []byte, limit int) ([]byte, error) {
	if a.init(); a.err != nil {
		return dst, a.err
	}
	out := a.enc.EncodeAll(src, dst)
	if len(out)-len(dst) > limit {
		return out[:len(dst)], ErrNoGain
	}
	return out, nil
}

func (a *zstdAlg) Decompress(dst, src []byte, n int) ([]byte, error) {
	if a.init(); a.err != nil {
		return dst, a.err
	}
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return dst, err
	}
	// Small frames may omit their content size; the capacity limit below
	// bounds those.
	if h.HasFCS && h.FrameContentSize != uint64(n) {
		return dst, errors.New("respire: codec: zstd frame content size differs from the original length")
	}
	// The capacity limit makes the decoder refuse to write more than n bytes.
	out, err := a.dec.DecodeAll(src, dst[:len(dst):len(dst)+n])
	if err != nil {
		return dst, err
	}
	return out, nil
}
