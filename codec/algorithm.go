package codec

import "strconv"

// ID identifies the algorithm of a frame's payload. It is stored in the
// frame, so the values of the defined IDs never change.
type ID uint8

// Defined algorithm IDs. IDs 6 to 127 are reserved for this package; IDs 128
// to 255 are free for algorithms that applications define.
const (
	IDNone    ID = 0
	IDZstd    ID = 1
	IDDeflate ID = 2
	IDS2      ID = 3
	IDLZ4     ID = 4
	IDBrotli  ID = 5
)

// String returns the algorithm's name, or its number for IDs without one.
func (id ID) String() string {
	switch id {
	case IDNone:
		return "none"
	case IDZstd:
		return "zstd"
	case IDDeflate:
		return "deflate"
	case IDS2:
		return "s2"
	case IDLZ4:
		return "lz4"
	case IDBrotli:
		return "brotli"
	}
	return "algorithm(" + strconv.Itoa(int(id)) + ")"
}

// An Algorithm compresses and decompresses frame payloads. Implementations
// must be safe for concurrent use and should keep their working state pooled,
// so that steady-state calls allocate nothing.
type Algorithm interface {
	// ID is the byte stored in frames written with this algorithm.
	ID() ID

	// Compress appends the compressed form of src to dst and returns the
	// extended slice. When the compressed form would be longer than limit
	// bytes it returns ErrNoGain, and may stop as soon as it knows; the
	// returned slice then still starts with dst, and its bytes past len(dst)
	// are unspecified.
	Compress(dst, src []byte, limit int) ([]byte, error)

	// Decompress appends to dst the n bytes that src decompresses to. The
	// caller guarantees cap(dst)-len(dst) >= n. It must fail, and must not
	// produce more than n bytes, when src does not decompress to exactly n
	// bytes.
	Decompress(dst, src []byte, n int) ([]byte, error)

	// Probe says which incompressibility probe the Codec runs before
	// calling Compress, and from which value length.
	Probe() Probe
}

// Probe describes the cheap check that keeps incompressible values away from
// a compressor. The check costs about 150 ns on compressible data (it stops
// at the first repeats) and up to about 1 µs on incompressible data, so it
// pays only from the length where a failed compression costs more.
type Probe struct {
	// Kind is the check to run.
	Kind ProbeKind
	// From is the shortest value to check; shorter ones go straight to the
	// compressor. Values below 256 bytes are never probed.
	From int
}

// ProbeKind selects the cheap check that keeps incompressible values away
// from a compressor.
type ProbeKind uint8

const (
	// ProbeNone skips the probe: for algorithms that give up on
	// incompressible input about as fast as the probe would tell.
	ProbeNone ProbeKind = iota
	// ProbeRepeats skips values in which sampled 4-byte sequences hardly
	// repeat: for LZ-only algorithms such as S2 and LZ4, which gain from
	// nothing else.
	ProbeRepeats
	// ProbeFull skips values whose samples have neither repeats nor an
	// uneven spread of byte values: for algorithms with an entropy coder
	// (Huffman, FSE), such as zstd, deflate and Brotli.
	ProbeFull
)
