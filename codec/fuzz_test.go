package codec_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/respire-go/respire/codec"
)

// FuzzDecode feeds arbitrary bytes to the decoder: it must never panic,
// return an error outside ErrInvalidFrame, or return a value other than the
// one its header describes. Seeds: testdata/fuzz/FuzzDecode, one valid frame
// per algorithm plus damaged ones.
func FuzzDecode(f *testing.F) {
	c := mustCodec(f, codec.Options{MaxDecodedSize: 1 << 20})
	for _, a := range algorithms {
		enc := mustCodec(f, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
		frame, err := enc.Encode(textOf(200))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		out, err := c.AppendDecode([]byte("keep"), frame)
		if err != nil {
			if !errors.Is(err, codec.ErrInvalidFrame) {
				t.Fatalf("error %v does not match ErrInvalidFrame", err)
			}
			if string(out) != "keep" {
				t.Fatalf("failed decode changed dst to %q", out)
			}
			return
		}
		out = out[4:]
		n, err := c.DecodedLen(frame)
		if err != nil || n != len(out) {
			t.Fatalf("decoded %d bytes; DecodedLen says %d, %v", len(out), n, err)
		}
		// What decodes once encodes and decodes again to the same bytes.
		again, err := c.Encode(out)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(again)
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("re-encoded value does not round-trip: %v", err)
		}
	})
}

// FuzzRoundTrip encodes arbitrary values with every algorithm and decodes
// them again.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(""), uint8(0))
	f.Add(textOf(3000), uint8(1))
	f.Add(randomOf(3000, 3), uint8(2))
	f.Add(bytes.Repeat([]byte{0}, 500), uint8(3))
	f.Add(textOf(100), uint8(4))
	f.Add(textOf(5000), uint8(5))
	codecs := make([]*codec.Codec, len(algorithms))
	for i, a := range algorithms {
		codecs[i] = mustCodec(f, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
	}
	f.Fuzz(func(t *testing.T, src []byte, which uint8) {
		c := codecs[int(which)%len(codecs)]
		frame, err := c.Encode(src)
		if err != nil {
			t.Fatal(err)
		}
		if len(frame) > codec.MaxEncodedLen(len(src)) {
			t.Fatalf("frame of %d bytes for a %d-byte value", len(frame), len(src))
		}
		out, err := c.Decode(frame)
		if err != nil || !bytes.Equal(out, src) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
