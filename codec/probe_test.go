package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func seeded(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestProbe(t *testing.T) {
	text := bytes.Repeat([]byte(`{"user":"respire","visits":[1,2,3],"active":true} `), 400)
	small := seeded(16<<10, 2)
	for i := range small {
		small[i] &= 0x0f // 4 bits of entropy per byte, no long repeats
	}
	block := seeded(700, 3)
	cases := []struct {
		name            string
		src             []byte
		entropy, lzOnly bool
	}{
		{"random 16K", seeded(16<<10, 1), false, false},
		{"random 1K", seeded(1<<10, 4), false, false},
		{"random 300", seeded(300, 5), false, false},
		{"random 8M", seeded(8<<20, 6), false, false},
		{"text", text, true, true},
		{"zeros", make([]byte, 5000), true, true},
		{"nibbles", small, true, false},
		{"repeated random block", bytes.Repeat(block, 30), true, true},
	}
	for _, tc := range cases {
		if got := compressible(tc.src, true); got != tc.entropy {
			t.Errorf("%s: compressible for an entropy coder = %v", tc.name, got)
		}
		if got := compressible(tc.src, false); got != tc.lzOnly {
			t.Errorf("%s: compressible for an LZ-only algorithm = %v", tc.name, got)
		}
	}
}

func BenchmarkProbe(b *testing.B) {
	for _, n := range []int{1 << 10, 16 << 10, 1 << 20} {
		src := seeded(n, 9)
		b.Run(byteSize(n)+"/random", func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if compressible(src, true) {
					b.Fatal("random data judged compressible")
				}
			}
		})
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
