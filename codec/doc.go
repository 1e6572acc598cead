// Package codec frames values for storage in Redis or Valkey: every value
// carries a checksum of its original bytes and, when it pays off, is
// compressed. Decoding is bounded: a frame that claims or expands to more than
// a configured size is refused before any memory is allocated for it.
//
// The package is independent of the client and the transport: it turns bytes
// into a frame and back. Typed helpers that store Go values through a client
// live in the subpackage typed.
//
// # Where to start
//
// Build a Codec with New and an Options value, then call Encode and Decode, or
// their append forms AppendEncode and AppendDecode, which write into a buffer
// the caller owns and allocate nothing once that buffer is large enough:
//
//	c, err := codec.New(codec.Options{Algorithm: codec.Zstd(3)})
//	frame, err := c.Encode(value)
//	value, err = c.Decode(frame)
//
// A Codec is safe for concurrent use. Its compressor and decompressor state is
// pooled and shared by all codecs that use the same Algorithm value.
//
// # Algorithms
//
// None (framed raw bytes), Zstd, Deflate and S2 live in this package, on
// github.com/klauspost/compress. LZ4 (github.com/pierrec/lz4/v4) and Brotli
// (github.com/andybalholm/brotli) live in the subpackages lz4 and brotli so
// that programs that do not use them do not link them.
//
// Every Codec decodes frames of None, Zstd, Deflate and S2 whatever algorithm
// it writes with. To read LZ4 or Brotli frames, a Codec must either write with
// that algorithm or list it in Options.Decoders.
//
// # When a value is compressed
//
// A value is compressed only when it is at least Options.Threshold bytes long
// (default 1 KiB) and compression saves more than the frame's own overhead,
// that is when the compressed frame is shorter than the original value.
// Otherwise the frame stores the value raw, with algorithm None.
//
// Before a compressor runs on a value of 256 bytes or more, a cheap probe
// looks at a few windows of 128 bytes spread over it (one byte in 32, at most
// 1 KiB in all; about 1 µs for a 16 KiB value). It estimates how evenly the
// bytes are spread over all 256 values and how often a 4-byte sequence
// repeats. Data that is both even and free of repeats, such as random bytes,
// encrypted data or already compressed images, is stored raw without calling
// the compressor. For S2 and LZ4, which only gain from repeats, only repeats
// count, and S2 is probed only from 4 KiB: below that it gives up on such
// data about as fast as the probe would tell (Algorithm.Probe says which
// probe suits an algorithm). Options.NoProbe turns the probe off.
//
// # Frame format, version 1
//
// A frame is a fixed 21-byte header followed by the payload. Multi-byte
// integers are little-endian.
//
//	offset  size  field
//	0       2     magic: 0xF7 0xC5 (neither byte can start valid UTF-8 text)
//	2       1     version: 1
//	3       1     algorithm of the payload: 0 none, 1 zstd, 2 deflate, 3 S2,
//	              4 LZ4, 5 Brotli; 6 to 127 reserved; 128 to 255 for
//	              algorithms defined by applications
//	4       1     flags: none are defined in version 1; all bits must be 0
//	5       4     original length: the length of the value, uint32
//	9       4     payload length: the number of bytes that follow the header,
//	              uint32; the frame ends exactly there
//	13      8     checksum, uint64: XXH3-64 (seed 0) of the original value;
//	              for a compressed payload, XORed with the XXH3-64 of the
//	              payload as stored
//	21      n     payload: the value itself (algorithm none) or its
//	              compressed form
//
// The overhead is therefore HeaderSize = 21 bytes per value. The checksum
// proves that the decoded value is the one that was encoded. Folding the
// payload's own hash into it for compressed frames makes decoding fail on any
// damaged byte, even in bits that a compressed format ignores (padding,
// unused flag bits), where the value would otherwise decode intact; the
// original value's hash is still recovered as the stored checksum XOR the
// payload's hash. A payload stored
// with algorithm none has exactly the original length. Compressed payloads use
// each library's block or single-frame format: a zstd frame (with content
// size, without its own checksum), a raw deflate stream, an S2 block, an LZ4
// block, a Brotli stream.
//
// # Errors
//
// Decoding fails, never returns wrong data, when a frame is damaged. Each kind
// of failure has its own sentinel for errors.Is: ErrNotFramed (the value does
// not start with the magic), ErrTruncated (shorter than its header or its
// payload length says), ErrVersion, ErrUnknownAlgorithm, ErrFlags,
// ErrTooLarge (the original length exceeds Options.MaxDecodedSize, checked
// before anything is allocated), ErrCorrupt (the payload does not decode to
// exactly the original length) and ErrChecksum. All of them also match
// ErrInvalidFrame.
//
// # Values written without a frame
//
// Values written before a codec was introduced have no frame. By default
// decoding them fails with ErrNotFramed. Options.Unframed set to
// UnframedPassThrough returns any value that does not start with the two
// magic bytes unchanged. That is meant for a migration: in that mode a value
// whose first two bytes are damaged reads as a plain value instead of failing.
package codec
