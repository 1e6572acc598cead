package benchmarks

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/respire-go/respire/respire"
)

// BenchmarkSetBytes: a caller holding its value as a []byte, sending it
// with SET through string(b) (a copy and an allocation per call) or
// respire.UnsafeString(b) (neither). Below and above the size from which
// the value is written from the caller's memory (64 KiB).
func BenchmarkSetBytes(b *testing.B) {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: benchServer(b).Addr})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, size := range []int{1 << 10, 128 << 10} {
		val := bytes.Repeat([]byte("v"), size)
		key := "bench:setbytes:" + strconv.Itoa(size)
		for _, way := range []struct {
			name string
			conv func([]byte) string
		}{
			{"string", func(b []byte) string { return string(b) }},
			{"UnsafeString", respire.UnsafeString},
		} {
			b.Run(strconv.Itoa(size>>10)+"KiB/"+way.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					if err := c.Set(ctx, key, way.conv(val), nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
