package solo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/respire-go/respire/respire"
)

// The allocation-free forms of GET, beside BenchmarkGet: GetLease (the
// value in a pooled buffer, released each time) and GetAppend (the value
// appended to the caller's buffer). Both check every reply byte for byte;
// both should report 0 allocs/op.

var errWrongValue = errors.New("wrong value")

func BenchmarkGetLease(b *testing.B) {
	benchLeaseForm(b, "bench:getlease", func(c *respire.Client, ctx context.Context, key string, _ []byte, val []byte) error {
		l, err := c.GetLease(ctx, key)
		if err != nil {
			return err
		}
		ok := bytes.Equal(l.Bytes(), val)
		l.Release()
		if !ok {
			return errWrongValue
		}
		return nil
	})
}

func BenchmarkGetAppend(b *testing.B) {
	benchLeaseForm(b, "bench:getappend", func(c *respire.Client, ctx context.Context, key string, dst []byte, val []byte) error {
		v, err := c.GetAppend(ctx, dst[:0], key)
		if err != nil {
			return err
		}
		if !bytes.Equal(v, val) {
			return errWrongValue
		}
		return nil
	})
}

// benchLeaseForm runs get in the shapes of BenchmarkGet: sizes 16 B, 1 KiB
// and 64 KiB, sequential and 64 goroutines, in every read mode. dst is a
// buffer of the caller's with room for the value.
func benchLeaseForm(b *testing.B, key string, get func(c *respire.Client, ctx context.Context, key string, dst, val []byte) error) {
	ctx := context.Background()
	for _, size := range []int{16, 1024, 64 << 10} {
		val := bytes.Repeat([]byte("v"), size)
		for _, m := range modes {
			c := client(b, m.readMode)
			if err := c.Set(ctx, key, string(val), nil); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%dB/seq/%s", size, m.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				dst := make([]byte, 0, size)
				for b.Loop() {
					if err := get(c, ctx, key, dst, val); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%dB/par64/%s", size, m.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				b.SetParallelism(32) // 64 goroutines on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					dst := make([]byte, 0, size)
					for pb.Next() {
						if err := get(c, ctx, key, dst, val); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
