package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	kflate "github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/respire-go/respire/codec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frameOf builds a frame by hand, for frames the encoder would not write.
func frameOf(alg codec.ID, size int, payload []byte, sum uint64) []byte {
	b := make([]byte, codec.HeaderSize, codec.HeaderSize+len(payload))
	b[0], b[1], b[2], b[3] = 0xF7, 0xC5, codec.Version, byte(alg)
	binary.LittleEndian.PutUint32(b[5:], uint32(size))
	binary.LittleEndian.PutUint32(b[9:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(b[13:], sum)
	return append(b, payload...)
}

func TestLayout(t *testing.T) {
	c := codec.MustNew(codec.Options{})
	frame, err := c.Encode([]byte("hello"))
	require.NoError(t, err)
	want := []byte{0xF7, 0xC5, 1, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0}
	assert.Equal(t, want, frame[:13])
	assert.Equal(t, "hello", string(frame[codec.HeaderSize:]))
	assert.Len(t, frame, codec.HeaderSize+5)
	assert.Equal(t, codec.HeaderSize+5, codec.MaxEncodedLen(5))
}

// TestEverySingleByteCorruption changes every byte of a small frame of every
// algorithm to every other value: decoding must fail each time.
func TestEverySingleByteCorruption(t *testing.T) {
	src := textOf(300)
	for _, a := range algorithms {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			c := mustCodec(t, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
			frame, err := c.Encode(src)
			require.NoError(t, err)
			require.Equal(t, a.alg.ID(), codec.ID(frame[3]), "the frame should be compressed")
			bad := bytes.Clone(frame)
			var out []byte
			for i := range frame {
				for x := 1; x < 256; x++ {
					bad[i] = frame[i] ^ byte(x)
					out, err = c.AppendDecode(out[:0], bad)
					if err == nil {
						t.Fatalf("byte %d ^ %#x: decoded without error (%d bytes, equal=%v)", i, x, len(out), bytes.Equal(out, src))
					}
					if !errors.Is(err, codec.ErrInvalidFrame) {
						t.Fatalf("byte %d ^ %#x: %v does not match ErrInvalidFrame", i, x, err)
					}
				}
				bad[i] = frame[i]
			}
		})
	}
}

func TestTruncation(t *testing.T) {
	for _, a := range algorithms {
		c := mustCodec(t, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
		frame, err := c.Encode(textOf(2000))
		require.NoError(t, err)
		for n := range len(frame) {
			_, err := c.Decode(frame[:n])
			if n < 2 {
				assert.ErrorIs(t, err, codec.ErrNotFramed, "%s: %d bytes", a.name, n)
			} else {
				assert.ErrorIs(t, err, codec.ErrTruncated, "%s: %d bytes", a.name, n)
			}
		}
		_, err = c.Decode(append(bytes.Clone(frame), 0))
		assert.ErrorIs(t, err, codec.ErrCorrupt, "%s: a byte after the payload", a.name)
	}
}

// TestDistinctErrors: each kind of damage has its own sentinel.
func TestDistinctErrors(t *testing.T) {
	c := mustCodec(t, codec.Options{})
	good, err := c.Encode([]byte("a value"))
	require.NoError(t, err)
	with := func(i int, v byte) []byte { b := bytes.Clone(good); b[i] = v; return b }

	cases := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"not framed", []byte(`{"plain":"json"}`), codec.ErrNotFramed},
		{"empty", nil, codec.ErrNotFramed},
		{"version", with(2, 2), codec.ErrVersion},
		{"version 0", with(2, 0), codec.ErrVersion},
		{"algorithm", with(3, 77), codec.ErrUnknownAlgorithm},
		{"application algorithm", with(3, 200), codec.ErrUnknownAlgorithm},
		{"flags", with(4, 1), codec.ErrFlags},
		{"checksum", with(13, good[13]^1), codec.ErrChecksum},
		{"value", with(codec.HeaderSize, 'A'), codec.ErrChecksum},
		{"truncated header", good[:10], codec.ErrTruncated},
		{"truncated payload", good[:len(good)-1], codec.ErrTruncated},
		{"trailing byte", append(bytes.Clone(good), 'x'), codec.ErrCorrupt},
		{"raw length mismatch", frameOf(codec.IDNone, 8, []byte("a value"), 0), codec.ErrCorrupt},
		{"too large", frameOf(codec.IDNone, 9<<20, nil, 0), codec.ErrTooLarge},
	}
	all := []error{codec.ErrNotFramed, codec.ErrTruncated, codec.ErrVersion, codec.ErrUnknownAlgorithm,
		codec.ErrFlags, codec.ErrTooLarge, codec.ErrCorrupt, codec.ErrChecksum}
	for _, tc := range cases {
		_, err := c.Decode(tc.frame)
		require.Error(t, err, tc.name)
		assert.ErrorIs(t, err, codec.ErrInvalidFrame, tc.name)
		for _, other := range all {
			assert.Equal(t, other == tc.want, errors.Is(err, other), "%s: %v vs %v", tc.name, err, other)
		}
	}
}

func TestUnframed(t *testing.T) {
	strict := codec.MustNew(codec.Options{})
	pass := codec.MustNew(codec.Options{Unframed: codec.UnframedPassThrough})
	plain := []byte(`{"written":"before the codec"}`)

	_, err := strict.Decode(plain)
	assert.ErrorIs(t, err, codec.ErrNotFramed)
	out, err := pass.Decode(plain)
	require.NoError(t, err)
	assert.Equal(t, plain, out)
	out, err = pass.AppendDecode([]byte("x"), plain)
	require.NoError(t, err)
	assert.Equal(t, "x"+string(plain), string(out))
	n, err := pass.DecodedLen(plain)
	require.NoError(t, err)
	assert.Equal(t, len(plain), n)
	out, err = pass.Decode(nil)
	require.NoError(t, err)
	assert.Empty(t, out)

	// Framed values are still decoded and checked in pass-through mode.
	frame, err := pass.Encode(plain)
	require.NoError(t, err)
	out, err = pass.Decode(frame)
	require.NoError(t, err)
	assert.Equal(t, plain, out)
	frame[len(frame)-1] ^= 1
	_, err = pass.Decode(frame)
	assert.ErrorIs(t, err, codec.ErrChecksum)
}

type bomb struct {
	name    string
	id      codec.ID
	payload []byte
}

// bombs returns, per algorithm, payloads that expand to 16 MiB of zeros.
func bombs(t *testing.T) []bomb {
	zeros := make([]byte, 16<<20)
	out := map[codec.ID][]byte{}

	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	require.NoError(t, err)
	out[codec.IDZstd] = enc.EncodeAll(zeros, nil)
	// A streamed zstd frame does not state its content size.
	var zb bytes.Buffer
	enc.Reset(&zb)
	_, err = enc.Write(zeros)
	require.NoError(t, err)
	require.NoError(t, enc.Close())
	list := []bomb{{"zstd-stream", codec.IDZstd, zb.Bytes()}}

	var fb bytes.Buffer
	fw, err := kflate.NewWriter(&fb, kflate.BestCompression)
	require.NoError(t, err)
	_, err = fw.Write(zeros)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	out[codec.IDDeflate] = fb.Bytes()

	out[codec.IDS2] = s2.Encode(nil, zeros)

	lb := make([]byte, lz4.CompressBlockBound(len(zeros)))
	k, err := lz4.CompressBlock(zeros, lb, nil)
	require.NoError(t, err)
	out[codec.IDLZ4] = lb[:k]

	b, err := brotliCompress(zeros)
	require.NoError(t, err)
	out[codec.IDBrotli] = b
	for id, p := range out {
		list = append(list, bomb{id.String(), id, p})
	}
	return list
}

// TestBomb: a frame whose header tells the truth about a huge value is
// refused before any allocation; one that lies about a small value is
// refused without decoding more than the small value.
func TestBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 16 MiB inputs")
	}
	c := mustCodec(t, codec.Options{})
	for _, b := range bombs(t) {
		id, payload := b.name, b.payload
		t.Logf("%v bomb: %d bytes expand to 16 MiB", id, len(payload))

		honest := frameOf(b.id, 16<<20, payload, 0)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := c.AppendDecode(nil, honest)
		runtime.ReadMemStats(&after)
		assert.ErrorIs(t, err, codec.ErrTooLarge, "%v", id)
		// Only the error's message is allocated.
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<10), "%v: bytes allocated refusing a 16 MiB frame", id)

		// The frame claims 4 KiB; the payload is the whole bomb.
		liar := frameOf(b.id, 4<<10, payload, 0)
		_, err = c.Decode(liar) // warm the pools
		require.ErrorIs(t, err, codec.ErrCorrupt, "%v", id)
		runtime.ReadMemStats(&before)
		for range 3 {
			_, err = c.Decode(liar)
			require.ErrorIs(t, err, codec.ErrCorrupt, "%v", id)
		}
		runtime.ReadMemStats(&after)
		if !raceEnabled { // the race detector empties pools at random
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%v: bytes allocated refusing a lying frame 3 times", id)
		}
	}
}
