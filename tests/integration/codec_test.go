package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/codec"
	"github.com/respire-go/respire/codec/brotli"
	"github.com/respire-go/respire/codec/lz4"
	"github.com/respire-go/respire/codec/typed"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type codecProfile struct {
	ID      int               `json:"id"`
	Name    string            `json:"name"`
	Bio     string            `json:"bio"`
	Tags    []string          `json:"tags"`
	Friends []int             `json:"friends"`
	Attrs   map[string]string `json:"attrs"`
}

// TestCodecStore sets and gets a struct through typed helpers with zstd above
// 1 KiB, end to end, and checks what the server holds.
func TestCodecStore(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		c := connect(t, respire.Options{Addr: srv.Addr})
		ctx := ctxT(t)

		cd := codec.MustNew(codec.Options{Algorithm: codec.Zstd(3)})
		users := typed.New[codecProfile](cd, nil)

		big := codecProfile{
			ID: 42, Name: "Ada", Bio: strings.Repeat("writes Redis clients in Go; ", 200),
			Tags: []string{"go", "redis", "valkey"}, Friends: []int{1, 2, 3, 5, 8},
			Attrs: map[string]string{"lang": "go", "tz": "UTC"},
		}
		small := codecProfile{ID: 7, Name: "Bo"}
		require.NoError(t, users.Set(ctx, c, "user:42", big))
		require.NoError(t, users.Set(ctx, c, "user:7", small))

		got, err := users.Get(ctx, c, "user:42")
		require.NoError(t, err)
		assert.Equal(t, big, got)
		got, err = users.Get(ctx, c, "user:7")
		require.NoError(t, err)
		assert.Equal(t, small, got)

		// The big value is stored compressed with zstd, the small one raw.
		raw, err := c.Get(ctx, "user:42")
		require.NoError(t, err)
		require.Greater(t, len(raw), codec.HeaderSize)
		assert.Equal(t, byte(codec.IDZstd), raw[3])
		assert.Less(t, len(raw), len(big.Bio)/4)
		raw, err = c.Get(ctx, "user:7")
		require.NoError(t, err)
		assert.Equal(t, byte(codec.IDNone), raw[3])

		_, err = users.Get(ctx, c, "user:missing")
		assert.ErrorIs(t, err, respire.Nil)

		// A value damaged on the server fails to load, never loads wrong.
		b := []byte(raw)
		b[len(b)-1] ^= 0x20
		require.NoError(t, c.Set(ctx, "user:7", string(b), nil))
		_, err = users.Get(ctx, c, "user:7")
		assert.ErrorIs(t, err, codec.ErrChecksum)

		// SetOptions pass through to every Set: with EX the key gets a
		// time to live.
		ex := time.Hour
		users.SetOptions = &respire.SetOptions{EX: ex}
		require.NoError(t, users.Set(ctx, c, "user:new", small))
		ttl, err := c.TTL(ctx, "user:new")
		require.NoError(t, err)
		assert.InDelta(t, time.Hour.Seconds(), ttl.Seconds(), 5)
	})
}

// TestCodecBinaryRoundTrip stores frames of every algorithm, including large
// and incompressible ones, and reads them back byte for byte.
func TestCodecBinaryRoundTrip(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	values := map[string]string{
		"text":   strings.Repeat("the quick brown fox jumps over the lazy dog ", 5000),
		"binary": string(pseudoRandom(300 << 10)),
		"empty":  "",
	}
	for _, alg := range []codec.Algorithm{codec.None(), codec.Zstd(0), codec.Deflate(), codec.S2(), lz4.New(), brotli.New(0)} {
		cd := codec.MustNew(codec.Options{Algorithm: alg})
		for name, v := range values {
			frame, err := cd.Encode([]byte(v))
			require.NoError(t, err)
			key := alg.ID().String() + ":" + name
			require.NoError(t, c.Set(ctx, key, string(frame), nil))
			stored, err := c.Get(ctx, key)
			require.NoError(t, err)
			out, err := cd.Decode([]byte(stored))
			require.NoError(t, err, key)
			require.Equal(t, v, string(out), key)
		}
	}
}

// pseudoRandom returns n incompressible bytes from a fixed xorshift sequence.
func pseudoRandom(n int) []byte {
	b := make([]byte, n)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 32)
	}
	return b
}
