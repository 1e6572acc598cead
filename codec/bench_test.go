package codec_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	kflate "github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/respire-go/respire/codec"
	"github.com/zeebo/xxh3"
)

// Benchmark shapes: go test -run '^$' -bench . -benchmem ./codec
var (
	benchSizes      = []int{64, 1 << 10, 16 << 10}
	benchThresholds = []struct {
		name  string
		value int
	}{{"0", codec.CompressAll}, {"1KiB", codec.DefaultThreshold}}
)

func sizeName(n int) string {
	if n >= 1<<10 {
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkCopy is the baseline: copying the value into a reused buffer.
func BenchmarkCopy(b *testing.B) {
	for _, n := range benchSizes {
		for _, p := range patterns {
			src := p.gen(n)
			b.Run(fmt.Sprintf("size=%s/data=%s", sizeName(n), p.name), func(b *testing.B) {
				b.SetBytes(int64(n))
				var dst []byte
				defer lockThread()()
				defer reportCPU(b, threadCPU())
				for b.Loop() {
					dst = append(dst[:0], src...)
				}
				b.ReportMetric(float64(len(dst)), "stored-B")
			})
		}
	}
}

// BenchmarkCodec measures AppendEncode and AppendDecode with reused buffers.
func BenchmarkCodec(b *testing.B) {
	for _, a := range algorithms {
		for _, th := range benchThresholds {
			c := mustCodec(b, codec.Options{Algorithm: a.alg, Threshold: th.value})
			for _, n := range benchSizes {
				for _, p := range patterns {
					src := p.gen(n)
					frame, err := c.Encode(src)
					if err != nil {
						b.Fatal(err)
					}
					name := fmt.Sprintf("alg=%s/threshold=%s/size=%s/data=%s", a.name, th.name, sizeName(n), p.name)
					b.Run("op=encode/"+name, func(b *testing.B) {
						b.SetBytes(int64(n))
						dst := make([]byte, 0, codec.MaxEncodedLen(n))
						defer lockThread()()
						defer reportCPU(b, threadCPU())
						for b.Loop() {
							dst, _ = c.AppendEncode(dst[:0], src)
						}
						b.ReportMetric(float64(len(dst)), "stored-B")
					})
					b.Run("op=decode/"+name, func(b *testing.B) {
						b.SetBytes(int64(n))
						dst := make([]byte, 0, n)
						defer lockThread()()
						defer reportCPU(b, threadCPU())
						for b.Loop() {
							dst, err = c.AppendDecode(dst[:0], frame)
						}
						if err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(float64(len(frame)), "stored-B")
					})
				}
			}
		}
	}
}

// bare is an algorithm called directly through its library, plus the XXH3
// checksum of the value: what the codec is measured against.
type bare struct {
	name string
	enc  func(dst, src []byte) []byte
	dec  func(dst, src []byte, n int) []byte
}

func bares(b testing.TB) []bare {
	zenc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
	if err != nil {
		b.Fatal(err)
	}
	zdec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	if err != nil {
		b.Fatal(err)
	}
	var fout sliceWriter
	fw, _ := kflate.NewWriter(&fout, kflate.BestSpeed)
	var fin codec.SliceReader
	fr := kflate.NewReader(&fin)
	var bout sliceWriter
	bw := brotli.NewWriterLevel(&bout, 4)
	var bin codec.SliceReader
	br := brotli.NewReader(&bin)
	var lc lz4.Compressor
	return []bare{
		{"zstd",
			func(dst, src []byte) []byte { return zenc.EncodeAll(src, dst) },
			func(dst, src []byte, n int) []byte { out, _ := zdec.DecodeAll(src, dst); return out }},
		{"deflate",
			func(dst, src []byte) []byte {
				fout.b = dst
				fw.Reset(&fout)
				fw.Write(src)
				fw.Close()
				return fout.b
			},
			func(dst, src []byte, n int) []byte {
				fin.B = src
				fr.(kflate.Resetter).Reset(&fin, nil)
				io.ReadFull(fr, dst[:n])
				return dst[:n]
			}},
		{"s2",
			func(dst, src []byte) []byte { return s2.Encode(dst[:cap(dst)], src) },
			func(dst, src []byte, n int) []byte { out, _ := s2.Decode(dst[:cap(dst)], src); return out }},
		{"lz4",
			func(dst, src []byte) []byte { k, _ := lc.CompressBlock(src, dst[:cap(dst)]); return dst[:k] },
			func(dst, src []byte, n int) []byte { k, _ := lz4.UncompressBlock(src, dst[:n]); return dst[:k] }},
		{"brotli",
			func(dst, src []byte) []byte {
				bout.b = dst
				bw.Reset(&bout)
				bw.Write(src)
				bw.Close()
				return bout.b
			},
			func(dst, src []byte, n int) []byte {
				bin.B = src
				br.Reset(&bin)
				io.ReadFull(br, dst[:n])
				return dst[:n]
			}},
	}
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// BenchmarkBare calls each library directly and adds the checksum, for the
// "within 10% of the bare library" comparison. It always compresses.
func BenchmarkBare(b *testing.B) {
	for _, l := range bares(b) {
		for _, n := range benchSizes {
			for _, p := range patterns {
				src := p.gen(n)
				bound := s2.MaxEncodedLen(n) + lz4.CompressBlockBound(n) + 64
				comp := l.enc(make([]byte, 0, bound), src)
				comp = append([]byte(nil), comp...)
				name := fmt.Sprintf("alg=%s/size=%s/data=%s", l.name, sizeName(n), p.name)
				var sum uint64
				b.Run("op=encode/"+name, func(b *testing.B) {
					b.SetBytes(int64(n))
					dst := make([]byte, 0, bound)
					defer lockThread()()
					defer reportCPU(b, threadCPU())
					for b.Loop() {
						dst = l.enc(dst[:0], src)
						sum += xxh3.Hash(src)
					}
					b.ReportMetric(float64(len(dst)), "stored-B")
				})
				b.Run("op=decode/"+name, func(b *testing.B) {
					b.SetBytes(int64(n))
					dst := make([]byte, 0, n+64)
					defer lockThread()()
					defer reportCPU(b, threadCPU())
					for b.Loop() {
						dst = l.dec(dst[:0], comp, n)
						sum += xxh3.Hash(dst)
					}
					if string(dst) != string(src) {
						b.Fatal("bare round trip differs")
					}
				})
			}
		}
	}
}

// BenchmarkPair runs the codec (threshold 0, probe on) and the bare library
// plus checksum side by side for each case, so that with -count N their
// ratio is taken from neighbouring runs on a shared, noisy machine.
func BenchmarkPair(b *testing.B) {
	for i, l := range bares(b) {
		a := algorithms[i+1]
		c := mustCodec(b, codec.Options{Algorithm: a.alg, Threshold: codec.CompressAll})
		for _, n := range benchSizes {
			for _, p := range patterns {
				src := p.gen(n)
				bound := s2.MaxEncodedLen(n) + lz4.CompressBlockBound(n) + 64
				comp := append([]byte(nil), l.enc(make([]byte, 0, bound), src)...)
				frame, err := c.Encode(src)
				if err != nil {
					b.Fatal(err)
				}
				name := fmt.Sprintf("alg=%s/size=%s/data=%s", a.name, sizeName(n), p.name)
				var sum uint64
				b.Run(name+"/op=encode/impl=codec", func(b *testing.B) {
					b.SetBytes(int64(n))
					dst := make([]byte, 0, bound)
					defer lockThread()()
					defer reportCPU(b, threadCPU())
					for b.Loop() {
						dst, _ = c.AppendEncode(dst[:0], src)
					}
				})
				b.Run(name+"/op=encode/impl=bare", func(b *testing.B) {
					b.SetBytes(int64(n))
					dst := make([]byte, 0, bound)
					defer lockThread()()
					defer reportCPU(b, threadCPU())
					for b.Loop() {
						dst = l.enc(dst[:0], src)
						sum += xxh3.Hash(src)
					}
				})
				b.Run(name+"/op=decode/impl=codec", func(b *testing.B) {
					b.SetBytes(int64(n))
					dst := make([]byte, 0, n+64)
					defer lockThread()()
					defer reportCPU(b, threadCPU())
					for b.Loop() {
						dst, _ = c.AppendDecode(dst[:0], frame)
					}
				})
				b.Run(name+"/op=decode/impl=bare", func(b *testing.B) {
					b.SetBytes(int64(n))
					dst := make([]byte, 0, n+64)
					defer lockThread()()
					defer reportCPU(b, threadCPU())
					for b.Loop() {
						dst = l.dec(dst[:0], comp, n)
						sum += xxh3.Hash(dst)
					}
				})
			}
		}
	}
}

// reportCPU reports the thread CPU time per operation since cpu0.
func reportCPU(b *testing.B, cpu0 int64) {
	if cpu := threadCPU(); cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
