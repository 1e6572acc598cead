package codec

import (
	"encoding/binary"
	"fmt"
)

// Frame layout constants; the package documentation describes the format.
const (
	// HeaderSize is the number of bytes a frame adds to its payload.
	HeaderSize = 21
	// Version is the frame version this package writes.
	Version = 1

	magic0 = 0xF7
	magic1 = 0xC5

	offVersion   = 2
	offAlgorithm = 3
	offFlags     = 4
	offSize      = 5
	offPayload   = 9
	offChecksum  = 13

	// maxFrameLen is the largest length a uint32 field can hold.
	maxFrameLen = 1<<32 - 1
)

// header is a parsed frame header.
type header struct {
	alg      ID
	size     int // original length
	payload  int // payload length
	checksum uint64
}

// putHeader writes a version 1 header into b[:HeaderSize].
func putHeader(b []byte, alg ID, size, payload int, sum uint64) {
	_ = b[HeaderSize-1]
	b[0] = magic0
	b[1] = magic1
	b[offVersion] = Version
	b[offAlgorithm] = byte(alg)
	b[offFlags] = 0
	binary.LittleEndian.PutUint32(b[offSize:], uint32(size))
	binary.LittleEndian.PutUint32(b[offPayload:], uint32(payload))
	binary.LittleEndian.PutUint64(b[offChecksum:], sum)
}

// isFramed reports whether b starts with the frame magic.
func isFramed(b []byte) bool {
	return len(b) >= 2 && b[0] == magic0 && b[1] == magic1
}

// parseHeader checks everything in a frame that can be checked without
// decoding its payload: magic, version, flags, lengths. maxSize bounds the
// original length. The algorithm is returned unchecked.
func parseHeader(b []byte, maxSize int) (header, error) {
	var h header
	if !isFramed(b) {
		return h, ErrNotFramed
	}
	if len(b) <= offVersion {
		return h, fmt.Errorf("%w: %d bytes", ErrTruncated, len(b))
	}
	if v := b[offVersion]; v != Version {
		return h, fmt.Errorf("%w %d", ErrVersion, v)
	}
	if len(b) < HeaderSize {
		return h, fmt.Errorf("%w: %d bytes, header needs %d", ErrTruncated, len(b), HeaderSize)
	}
	if f := b[offFlags]; f != 0 {
		return h, fmt.Errorf("%w %#02x", ErrFlags, f)
	}
	h.alg = ID(b[offAlgorithm])
	size := uint64(binary.LittleEndian.Uint32(b[offSize:]))
	if size > uint64(maxSize) {
		return h, fmt.Errorf("%w: frame holds %d bytes, limit is %d", ErrTooLarge, size, maxSize)
	}
	h.size = int(size)
	payload := uint64(binary.LittleEndian.Uint32(b[offPayload:]))
	have := uint64(len(b) - HeaderSize)
	switch {
	case have < payload:
		return h, fmt.Errorf("%w: payload has %d of %d bytes", ErrTruncated, have, payload)
	case have > payload:
		return h, fmt.Errorf("%w: %d bytes after the payload", ErrCorrupt, have-payload)
	}
	h.payload = int(payload)
	h.checksum = binary.LittleEndian.Uint64(b[offChecksum:])
	return h, nil
}
