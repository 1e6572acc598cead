package resp

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReader feeds arbitrary bytes to a Reader with small limits. It must
// never panic, every error must be a protocol error or an unexpected EOF,
// and every value read must survive AppendValue and a second parse
// unchanged.
func FuzzReader(f *testing.F) {
	for _, fx := range fixtures {
		f.Add([]byte(fx.in))
	}
	lim := Limits{MaxBulk: 1 << 12, MaxAggregate: 64, MaxLine: 256, MaxDepth: 16, MaxNodes: 1024}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := fuzzRead(t, bytes.NewReader(data), lim)
		pieces := fuzzRead(t, iotest.OneByteReader(bytes.NewReader(data)), lim)
		if whole != pieces {
			t.Fatalf("reading at once and byte by byte differ:\n%s\n%s", whole, pieces)
		}
	})
}

// fuzzRead checks every value of rd and returns a transcript of what it
// read, to compare readings of the same bytes.
func fuzzRead(t *testing.T, rd io.Reader, lim Limits) string {
	t.Helper()
	r := NewReader(rd, lim)
	var transcript []byte
	for {
		m, err := r.Next()
		if err == io.EOF {
			return string(transcript)
		}
		if err != nil {
			if !errors.Is(err, ErrProtocol) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return string(transcript) + "\nerror: " + err.Error()
		}
		if m.Next(0) != len(m) {
			t.Fatalf("Next(0) = %d, want %d", m.Next(0), len(m))
		}
		for i := range m {
			m.Value(i)
			m.Child(i, 0)
		}
		tree := m.Tree()
		enc := AppendValue(nil, tree)
		// Merged attributes may exceed the small limits: re-read with defaults.
		again, err := NewReader(bytes.NewReader(enc), Limits{}).Next()
		if err != nil {
			t.Fatalf("re-parse of %q: %v", enc, err)
		}
		if got := again.Tree(); !valueEqual(tree, got) {
			t.Fatalf("round trip of %q\nfirst  %#v\nsecond %#v", enc, tree, got)
		}
		transcript = append(transcript, enc...)
	}
}
