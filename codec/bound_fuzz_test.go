package codec_test

import (
	"bytes"
	"errors"
	"runtime/metrics"
	"testing"

	"github.com/respire-go/respire/codec"
)

// fuzzLimit is the MaxDecodedSize of FuzzDecodeBound: small, so that a
// frame that could make decoding allocate more than its value stands out.
const fuzzLimit = 64 << 10

// decoderSlack bounds the working memory a decompressor may allocate for
// one frame on top of the value (a pooled reader rebuilt after a GC emptied
// its pool, its window and tables): a constant, whatever the frame claims.
const decoderSlack = 1 << 20

// FuzzDecodeBound decodes arbitrary bytes with a 64 KiB MaxDecodedSize
// into a buffer that has room for any value the Codec accepts. Decoding
// must never panic, fail with an error outside ErrInvalidFrame, write
// outside the buffer, or allocate more than decoderSlack (the value itself
// needs nothing, the buffer has room). The same bytes, taken as a value,
// must encode and decode back to themselves with every algorithm. In
// pass-through mode an unframed input longer than the limit is refused.
// Seeds: testdata/fuzz/FuzzDecodeBound.
func FuzzDecodeBound(f *testing.F) {
	strict := mustCodec(f, codec.Options{MaxDecodedSize: fuzzLimit})
	pass := mustCodec(f, codec.Options{MaxDecodedSize: fuzzLimit, Unframed: codec.UnframedPassThrough})
	encoders := make([]*codec.Codec, len(algorithms))
	for i, a := range algorithms {
		encoders[i] = mustCodec(f, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll, MaxDecodedSize: fuzzLimit})
		for _, src := range [][]byte{textOf(3000), randomOf(300, 1)} {
			frame, err := encoders[i].Encode(src)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(frame)
			// Warm every decoder's pool, so that its first allocation is
			// not counted against a fuzzed frame.
			if _, err := strict.Decode(frame); err != nil {
				f.Fatal(err)
			}
		}
		// A frame claiming the whole limit, with a payload of nothing.
		f.Add(frameOf(a.alg.ID(), fuzzLimit, nil, 0))
	}
	buf := make([]byte, 0, fuzzLimit)
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		before := allocated()
		out, err := strict.AppendDecode(buf[:0], frame)
		if n := allocated() - before; n > decoderSlack {
			t.Fatalf("decoding %d bytes allocated %d bytes (%v)", len(frame), n, err)
		}
		switch {
		case err != nil:
			if !errors.Is(err, codec.ErrInvalidFrame) {
				t.Fatalf("error %v does not match ErrInvalidFrame", err)
			}
		case len(out) > fuzzLimit:
			t.Fatalf("decoded %d bytes, limit is %d", len(out), fuzzLimit)
		case len(out) > 0 && &out[0] != &buf[:1][0]:
			t.Fatal("decoded into new memory although the buffer had room")
		default:
			n, err := strict.DecodedLen(frame)
			if err != nil || n != len(out) {
				t.Fatalf("decoded %d bytes; DecodedLen says %d, %v", len(out), n, err)
			}
		}

		framed := len(frame) >= 2 && frame[0] == 0xF7 && frame[1] == 0xC5
		_, err = pass.Decode(frame)
		if !framed && len(frame) > fuzzLimit && !errors.Is(err, codec.ErrTooLarge) {
			t.Fatalf("pass-through of %d bytes, limit %d: %v", len(frame), fuzzLimit, err)
		}

		// Any input is also a value to store.
		enc := encoders[len(frame)%len(encoders)]
		again, err := enc.Encode(frame)
		if len(frame) > fuzzLimit {
			if !errors.Is(err, codec.ErrTooLarge) {
				t.Fatalf("encoding %d bytes, limit %d: %v", len(frame), fuzzLimit, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("encoding %d bytes with %v: %v", len(frame), enc.Algorithm().ID(), err)
		}
		back, err := strict.Decode(again)
		if err != nil || !bytes.Equal(back, frame) {
			t.Fatalf("%v: value does not round-trip: %v", enc.Algorithm().ID(), err)
		}
	})
}
