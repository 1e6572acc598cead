package brotli

import (
	"bytes"
	"testing"

	"github.com/andybalholm/brotli"
)

// TestWindowBits checks the header parser against streams the library
// writes with every window size.
func TestWindowBits(t *testing.T) {
	for wb := minWindowBits; wb <= maxWindowBits; wb++ {
		var b bytes.Buffer
		w := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: 4, LGWin: wb})
		if _, err := w.Write([]byte("a brotli stream")); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := windowBits(b.Bytes()[0]); got != wb {
			t.Errorf("window bits %d read as %d", wb, got)
		}
	}
	for n, want := range map[int]int{0: 10, 1000: 10, 1008: 10, 1009: 11, 16 << 10: 15, 8 << 20: 24, 1 << 30: 24} {
		if got := windowBitsFor(n); got != want {
			t.Errorf("windowBitsFor(%d) = %d, want %d", n, got, want)
		}
	}
}
