package resp

import (
	"strings"
	"testing"
)

func benchReader(b *testing.B, unit string) {
	data := []byte(strings.Repeat(unit, max(1, 64<<10/len(unit))))
	r := NewReader(&cycleReader{data: data}, Limits{})
	for range 1000 {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(unit)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReaderSmall reads a stream of small replies; one op is one reply.
func BenchmarkReaderSmall(b *testing.B) {
	b.Run("ok", func(b *testing.B) { benchReader(b, "+OK\r\n") })
	b.Run("int", func(b *testing.B) { benchReader(b, ":1\r\n") })
	b.Run("bulk", func(b *testing.B) { benchReader(b, "$5\r\nhello\r\n") })
	b.Run("array", func(b *testing.B) { benchReader(b, "*3\r\n$5\r\nhello\r\n:42\r\n%1\r\n+k\r\n,1.5\r\n") })
}

func BenchmarkReaderBulk1K(b *testing.B) {
	benchReader(b, string(AppendBulkString(nil, strings.Repeat("v", 1<<10))))
}

func BenchmarkReaderBulk8K(b *testing.B) {
	benchReader(b, string(AppendBulkString(nil, strings.Repeat("v", 8<<10))))
}

func BenchmarkAppendCommand(b *testing.B) {
	buf := make([]byte, 0, 256)
	value := strings.Repeat("v", 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendArrayLen(buf[:0], 3)
		buf = AppendBulkString(buf, "SET")
		buf = AppendBulkString(buf, "key:000000001")
		buf = AppendBulkString(buf, value)
	}
}

func BenchmarkAppendCommandVariadic(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendCommand(buf[:0], "GET", "key:000000001")
	}
}

func BenchmarkTree(b *testing.B) {
	m, err := NewReader(strings.NewReader("*3\r\n$5\r\nhello\r\n:42\r\n%1\r\n+k\r\n,1.5\r\n"), Limits{}).Next()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Tree()
	}
}
