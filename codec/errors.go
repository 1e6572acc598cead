package codec

import (
	"errors"
	"strings"
)

// ErrInvalidFrame is matched by every error that reports a value that cannot
// be decoded: all the sentinels below except ErrNoGain wrap it.
var ErrInvalidFrame = errors.New("respire: codec: invalid frame")

// Sentinel errors returned by decoding; test them with errors.Is.
var (
	// ErrNotFramed reports a value that does not start with the frame magic.
	ErrNotFramed = frameError("value is not framed")
	// ErrTruncated reports a frame shorter than its header or its payload
	// length says.
	ErrTruncated = frameError("truncated frame")
	// ErrVersion reports a frame version this package does not know.
	ErrVersion = frameError("unknown frame version")
	// ErrUnknownAlgorithm reports an algorithm byte that is not defined or
	// that the Codec has no decoder for.
	ErrUnknownAlgorithm = frameError("unknown algorithm")
	// ErrFlags reports flag bits that version 1 does not define.
	ErrFlags = frameError("unknown flags")
	// ErrTooLarge reports a value longer than Options.MaxDecodedSize, found
	// before anything is allocated for it. Encoding returns it too, for
	// values the Codec could not decode again.
	ErrTooLarge = frameError("value too large")
	// ErrCorrupt reports a payload that does not decode to exactly the
	// original length, or a frame with bytes after its payload.
	ErrCorrupt = frameError("corrupt payload")
	// ErrChecksum reports decoded bytes whose checksum does not match the
	// frame's.
	ErrChecksum = frameError("checksum mismatch")
)

// ErrNoGain is returned by Algorithm.Compress when the compressed form would
// be longer than the limit it was given. The Codec then stores the value raw.
var ErrNoGain = errors.New("respire: codec: compression does not pay off")

// sentinel is an error that matches ErrInvalidFrame as well as itself.
type sentinel struct{ msg string }

func frameError(msg string) error { return &sentinel{msg: "respire: codec: " + msg} }

func (e *sentinel) Error() string { return e.msg }

// trim returns err's message without the "respire: codec: " (or
// "respire: ") that begins it, for quoting it inside another message of
// this package.
func trim(err error) string {
	msg := err.Error()
	if m, ok := strings.CutPrefix(msg, "respire: codec: "); ok {
		return m
	}
	return strings.TrimPrefix(msg, "respire: ")
}

func (e *sentinel) Is(target error) bool { return target == ErrInvalidFrame }
