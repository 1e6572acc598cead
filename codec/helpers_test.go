package codec_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/respire-go/respire/codec"
	"github.com/respire-go/respire/codec/brotli"
	"github.com/respire-go/respire/codec/lz4"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// algorithms lists every algorithm under test, by name.
var algorithms = []struct {
	name string
	alg  codec.Algorithm
}{
	{"none", codec.None()},
	{"zstd", codec.Zstd(3)},
	{"deflate", codec.Deflate()},
	{"s2", codec.S2()},
	{"lz4", lz4.New()},
	{"brotli", brotli.New(4)},
}

// allDecoders lets a codec read every algorithm's frames.
var allDecoders = []codec.Algorithm{lz4.New(), brotli.New(4)}

// textOf returns n bytes of repeated, slightly varying text, like a log or a
// JSON document: compressible by every algorithm.
func textOf(n int) []byte {
	b := make([]byte, 0, n+64)
	for i := 0; len(b) < n; i++ {
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"name":"respire user","tags":["cache","codec"],"ok":true} `...)
	}
	return b[:n]
}

// randomOf returns n seeded random bytes: incompressible.
func randomOf(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

var patterns = []struct {
	name string
	gen  func(n int) []byte
}{
	{"text", textOf},
	{"random", func(n int) []byte { return randomOf(n, uint64(n)+1) }},
}

func mustCodec(t testing.TB, opts codec.Options) *codec.Codec {
	t.Helper()
	if opts.Decoders == nil {
		opts.Decoders = allDecoders
	}
	c, err := codec.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
