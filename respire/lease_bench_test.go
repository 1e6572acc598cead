package respire

import (
	"strconv"
	"strings"
	"testing"
)

// The pool's own cost, without a server: take a Lease, fill it, release
// it, on one goroutine and on many.
func BenchmarkLeasePool(b *testing.B) {
	for _, size := range []int{16, 1024, 64 << 10} {
		val := []byte(strings.Repeat("v", size))
		b.Run(strconv.Itoa(size)+"B/seq", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l := getLease(size)
				l.b = append(l.b, val...)
				l.Release()
			}
		})
		b.Run(strconv.Itoa(size)+"B/par", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l := getLease(size)
					l.b = append(l.b, val...)
					l.Release()
				}
			})
		})
	}
}

// BenchmarkDecLease is GetLease without the network: the reader
// goroutine's part (decode a bulk reply into a Lease) and the caller's
// (release it).
func BenchmarkDecLease(b *testing.B) {
	m := msg(b, "$1024|"+strings.Repeat("v", 1024)+"|")
	b.ReportAllocs()
	for b.Loop() {
		var r result
		if err := decLeaseNull(m, &r); err != nil {
			b.Fatal(err)
		}
		r.Any.(*Lease).Release()
	}
}
