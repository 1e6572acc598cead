package codec

import (
	"errors"
	"strings"
	"testing"
)

// TestErrorsNamePackage: the package's errors read "respire: codec: ...",
// with "respire:" once, also when one wraps an algorithm's error.
func TestErrorsNamePackage(t *testing.T) {
	for _, err := range []error{ErrInvalidFrame, ErrNotFramed, ErrTruncated, ErrVersion, ErrUnknownAlgorithm,
		ErrFlags, ErrTooLarge, ErrCorrupt, ErrChecksum, ErrNoGain} {
		if msg := err.Error(); !strings.HasPrefix(msg, "respire: codec: ") || strings.Count(msg, "respire:") != 1 {
			t.Errorf("%q does not start with \"respire: codec: \" once", msg)
		}
	}
	_, err := New(Options{Threshold: -1})
	if err == nil || !strings.HasPrefix(err.Error(), "respire: codec: ") {
		t.Errorf("New with a negative Threshold: %v", err)
	}

	// A payload that does not decode: the algorithm's error inside
	// ErrCorrupt, the package named once.
	c := MustNew(Options{Algorithm: S2(), Threshold: 1})
	frame, err := c.Encode([]byte(strings.Repeat("compressible ", 100)))
	if err != nil {
		t.Fatal(err)
	}
	frame[len(frame)-1] ^= 0xff
	frame[HeaderSize] ^= 0xff
	_, err = c.Decode(frame)
	if !errors.Is(err, ErrInvalidFrame) {
		t.Fatalf("Decode of a damaged frame: %v", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "respire: codec: ") || strings.Count(msg, "respire:") != 1 {
		t.Errorf("%q does not start with \"respire: codec: \" once", msg)
	}
}
