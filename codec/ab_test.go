package codec_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/pierrec/lz4/v4"
	"github.com/respire-go/respire/codec"
	"github.com/zeebo/xxh3"
)

// TestOverheadVsBare compares the codec (threshold 0, probe on) with each
// library called directly plus the XXH3 checksum, in interleaved rounds of
// thread CPU time, so that a busy shared machine affects both sides alike.
// It prints a table; run it with RESPIRE_CODEC_AB=1 go test -run
// OverheadVsBare -v ./codec.
func TestOverheadVsBare(t *testing.T) {
	if os.Getenv("RESPIRE_CODEC_AB") == "" {
		t.Skip("set RESPIRE_CODEC_AB=1 to measure")
	}
	defer lockThread()()
	const rounds = 41
	measure := func(f func(), iters int) float64 {
		c0 := threadCPU()
		for range iters {
			f()
		}
		return float64(threadCPU()-c0) / float64(iters)
	}
	fmt.Println("| alg | size | data | op | codec cpu-ns | bare+xxh3 cpu-ns | codec/bare (median of rounds) |")
	fmt.Println("|---|---|---|---|--:|--:|--:|")
	var sink uint64
	for i, l := range bares(t) {
		a := algorithms[i+1]
		c := mustCodec(t, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
		for _, n := range benchSizes {
			for _, p := range patterns {
				src := p.gen(n)
				bound := s2.MaxEncodedLen(n) + lz4.CompressBlockBound(n) + 64
				comp := append([]byte(nil), l.enc(make([]byte, 0, bound), src)...)
				frame, err := c.Encode(src)
				if err != nil {
					t.Fatal(err)
				}
				dst := make([]byte, 0, bound)
				ops := []struct {
					name        string
					codec, bare func()
				}{
					{"encode",
						func() { dst, _ = c.AppendEncode(dst[:0], src) },
						func() { dst = l.enc(dst[:0], src); sink += xxh3.Hash(src) }},
					{"decode",
						func() { dst, _ = c.AppendDecode(dst[:0], frame) },
						func() { dst = l.dec(dst[:0], comp, n); sink += xxh3.Hash(dst) }},
				}
				for _, op := range ops {
					// Size a round to about half a millisecond.
					op.codec()
					op.bare()
					per := max(measure(op.codec, 20), 1)
					iters := max(int(500_000/per), 5)
					var cs, bs, ratios []float64
					for r := range rounds {
						var x, y float64
						if r%2 == 0 {
							x, y = measure(op.codec, iters), measure(op.bare, iters)
						} else {
							y, x = measure(op.bare, iters), measure(op.codec, iters)
						}
						cs, bs, ratios = append(cs, x), append(bs, y), append(ratios, x/y)
					}
					fmt.Printf("| %s | %s | %s | %s | %.0f | %.0f | %.2f |\n", a.name, sizeName(n), p.name, op.name,
						median(cs), median(bs), median(ratios))
				}
			}
		}
	}
	_ = sink
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
