package codec_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/respire-go/respire/codec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sizes = []int{0, 1, 63, 64, 1<<10 - 1, 1 << 10, 16 << 10, 1 << 20, 8 << 20}

// TestRoundTrip runs every algorithm over every size and pattern, with the
// probe on and off, compressing every value.
func TestRoundTrip(t *testing.T) {
	inputs := map[string]map[int][]byte{}
	for _, p := range patterns {
		inputs[p.name] = map[int][]byte{}
		for _, n := range sizes {
			inputs[p.name][n] = p.gen(n)
		}
	}
	for _, a := range algorithms {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			for _, noProbe := range []bool{false, true} {
				c := mustCodec(t, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll, NoProbe: noProbe})
				var frame, out []byte
				for _, p := range patterns {
					for _, n := range sizes {
						name := fmt.Sprintf("%s/%d/noprobe=%v", p.name, n, noProbe)
						src := inputs[p.name][n]
						var err error
						frame, err = c.AppendEncode(frame[:0], src)
						require.NoError(t, err, name)
						out, err = c.AppendDecode(out[:0], frame)
						require.NoError(t, err, name)
						require.True(t, bytes.Equal(src, out), "%s: decoded value differs", name)

						require.GreaterOrEqual(t, len(frame), codec.HeaderSize, name)
						stored := codec.ID(frame[3])
						if stored == codec.IDNone {
							assert.Equal(t, n+codec.HeaderSize, len(frame), name)
						} else {
							assert.Less(t, len(frame), n, "%s: a compressed frame must be shorter than the value", name)
						}
						if a.alg.ID() != codec.IDNone && p.name == "text" && n >= 1<<10 {
							assert.Equal(t, a.alg.ID(), stored, "%s: text should compress", name)
						}
						if p.name == "random" {
							assert.Equal(t, codec.IDNone, stored, "%s: random bytes should be stored raw", name)
						}
					}
				}
			}
		})
	}
}

func TestThreshold(t *testing.T) {
	src := textOf(1<<10 - 1)
	c := mustCodec(t, codec.Options{Algorithm: codec.Zstd(0)})
	frame, err := c.Encode(src)
	require.NoError(t, err)
	assert.Equal(t, codec.IDNone, codec.ID(frame[3]), "below the default threshold")
	frame, err = c.Encode(textOf(1 << 10))
	require.NoError(t, err)
	assert.Equal(t, codec.IDZstd, codec.ID(frame[3]), "at the default threshold")

	_, err = codec.New(codec.Options{Threshold: -1})
	assert.Error(t, err)
	_, err = codec.New(codec.Options{MaxDecodedSize: -1})
	assert.Error(t, err)
	_, err = codec.New(codec.Options{Unframed: 7})
	assert.Error(t, err)
}

func TestAppendKeepsPrefix(t *testing.T) {
	for _, a := range algorithms {
		c := mustCodec(t, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
		for _, src := range [][]byte{textOf(5000), randomOf(5000, 1), nil} {
			frame, err := c.AppendEncode([]byte("prefix"), src)
			require.NoError(t, err)
			require.Equal(t, "prefix", string(frame[:6]))
			out, err := c.AppendDecode([]byte("head"), frame[6:])
			require.NoError(t, err)
			require.Equal(t, "head", string(out[:4]))
			require.True(t, bytes.Equal(src, out[4:]), a.name)
			n, err := c.DecodedLen(frame[6:])
			require.NoError(t, err)
			require.Equal(t, len(src), n)
		}
	}
}

// TestCrossDecode: any codec reads the built-in algorithms' frames, and the
// subpackage ones only when it is given their decoders.
func TestCrossDecode(t *testing.T) {
	plain := codec.MustNew(codec.Options{})
	src := textOf(4096)
	for _, a := range algorithms {
		frame, err := mustCodec(t, codec.Options{Algorithm: a.alg}).Encode(src)
		require.NoError(t, err)
		out, err := plain.Decode(frame)
		switch a.alg.ID() {
		case codec.IDLZ4, codec.IDBrotli:
			assert.ErrorIs(t, err, codec.ErrUnknownAlgorithm, a.name)
			out, err = mustCodec(t, codec.Options{}).Decode(frame)
			require.NoError(t, err, a.name)
			assert.Equal(t, src, out)
		default:
			require.NoError(t, err, a.name)
			assert.Equal(t, src, out)
		}
	}
}

func TestEncodeTooLarge(t *testing.T) {
	c := codec.MustNew(codec.Options{MaxDecodedSize: 100})
	_, err := c.Encode(make([]byte, 100))
	require.NoError(t, err)
	_, err = c.Encode(make([]byte, 101))
	assert.ErrorIs(t, err, codec.ErrTooLarge)
}

func TestConcurrent(t *testing.T) {
	src := [][]byte{textOf(20000), randomOf(20000, 7), textOf(100)}
	done := make(chan error)
	for _, a := range algorithms {
		c := mustCodec(t, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
		for g := range 3 {
			go func() {
				var frame, out []byte
				var err error
				for i := range 30 {
					in := src[(i+g)%len(src)]
					if frame, err = c.AppendEncode(frame[:0], in); err == nil {
						out, err = c.AppendDecode(out[:0], frame)
					}
					if err == nil && !bytes.Equal(in, out) {
						err = fmt.Errorf("%s: round trip differs", a.name)
					}
					if err != nil {
						break
					}
				}
				done <- err
			}()
		}
	}
	for range 3 * len(algorithms) {
		require.NoError(t, <-done)
	}
}

// TestAllocs: the append forms allocate nothing once buffers are warm.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, a := range algorithms {
		for _, p := range patterns {
			for _, n := range []int{64, 1 << 10, 16 << 10} {
				for _, th := range []int{codec.CompressAll, codec.DefaultThreshold} {
					c := mustCodec(t, codec.Options{Algorithm: a.alg, Threshold: th})
					src := p.gen(n)
					frame, err := c.AppendEncode(nil, src)
					require.NoError(t, err)
					out, err := c.AppendDecode(nil, frame)
					require.NoError(t, err)
					enc := testing.AllocsPerRun(50, func() { frame, _ = c.AppendEncode(frame[:0], src) })
					dec := testing.AllocsPerRun(50, func() { out, _ = c.AppendDecode(out[:0], frame) })
					assert.Zero(t, enc, "%s/%s/%d/threshold=%d encode", a.name, p.name, n, th)
					// andybalholm/brotli allocates its context maps for every
					// stream it decodes (3 small allocations); nothing else may.
					if a.alg.ID() == codec.IDBrotli && codec.ID(frame[3]) == codec.IDBrotli {
						assert.LessOrEqual(t, dec, 3.0, "%s/%s/%d/threshold=%d decode", a.name, p.name, n, th)
						continue
					}
					assert.Zero(t, dec, "%s/%s/%d/threshold=%d decode", a.name, p.name, n, th)
				}
			}
		}
	}
}
