package codec_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/respire-go/respire/codec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A zstd level out of range used to become the default (negative) or 22
// (too high) without a word.
func TestZstdLevelOutOfRange(t *testing.T) {
	for _, level := range []int{-1, -7, 23, 100} {
		a := codec.Zstd(level)
		_, err := codec.New(codec.Options{Algorithm: a})
		require.Error(t, err, "level %d", level)
		assert.Contains(t, err.Error(), "zstd level")
		_, err = codec.New(codec.Options{Decoders: []codec.Algorithm{a}})
		require.Error(t, err, "level %d as a decoder", level)
		_, err = a.Compress(nil, []byte("abc"), 100)
		assert.Error(t, err, "level %d used directly", level)
	}
	for _, level := range []int{0, 1, 3, 22} {
		_, err := codec.New(codec.Options{Algorithm: codec.Zstd(level)})
		require.NoError(t, err, "level %d", level)
	}
}

// MaxDecodedSize bounds values passed through unframed too.
func TestUnframedLimit(t *testing.T) {
	c := codec.MustNew(codec.Options{MaxDecodedSize: 8, Unframed: codec.UnframedPassThrough})
	out, err := c.Decode([]byte("12345678"))
	require.NoError(t, err)
	assert.Equal(t, "12345678", string(out))

	long := []byte("123456789")
	_, err = c.Decode(long)
	assert.ErrorIs(t, err, codec.ErrTooLarge)
	out, err = c.AppendDecode([]byte("x"), long)
	assert.ErrorIs(t, err, codec.ErrTooLarge)
	assert.Equal(t, "x", string(out))
	_, err = c.DecodedLen(long)
	assert.ErrorIs(t, err, codec.ErrTooLarge)
}

// A raw frame whose payload is shorter than the length it claims is
// refused before anything is allocated for the claimed length.
func TestRawFrameLyingAboutItsLength(t *testing.T) {
	c := codec.MustNew(codec.Options{})
	liar := frameOf(codec.IDNone, codec.DefaultMaxDecodedSize, []byte("tiny"), 0)
	_, err := c.Decode(liar)
	require.ErrorIs(t, err, codec.ErrCorrupt)
	// Other tests of the package run in parallel and allocate too: take
	// the least of a few tries, and a bound far below the claim.
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = c.AppendDecode(nil, liar)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	assert.Less(t, least, uint64(1<<20), "bytes allocated refusing an 8 MiB claim")
}
